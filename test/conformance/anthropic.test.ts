import { CONFORMANCE_SECRET, loadFixture, replay, runConformance } from 'switchyard-gateway/kit/testing';
import plugin from '../../plugins/anthropic/index.ts';
import { fixturesOf } from '../helpers/repo.ts';

const f = (name: string) => loadFixture(fixturesOf('anthropic'), name);

runConformance({
  name: 'anthropic',
  plugin,
  provider: (url) => ({ plugin: 'anthropic', baseUrl: url, apiKey: CONFORMANCE_SECRET }),
  model: 'claude-3-opus-latest',
  reportedModel: 'claude-3-opus-20240229',
  scenarios: {
    text: { respond: () => replay(f('messages-system-prompt')), text: 'Paris' },
    textStream: { respond: () => replay(f('stream-basic')) },
    toolCall: { respond: () => replay(f('messages-tool-use')), toolName: 'test_tool' },
    toolCallStream: { respond: () => replay(f('stream-tool-use')), toolName: 'get_weather' },
    errors: {
      400: () => replay(f('error-400-invalid-request')),
      401: () => replay(f('error-401-authentication')),
      // No recording exists for these: bodies in Anthropic's documented error shape.
      403: () => ({
        status: 403,
        body: { type: 'error', error: { type: 'permission_error', message: 'Your API key does not have permission to use the specified resource.' }, request_id: 'req_011CTestPermission0000000' },
      }),
      404: () => replay(f('error-404-not-found-model')),
      // The recording has no headers; real 429s carry retry-after.
      429: () => replay(f('error-429-rate-limit'), { headers: { 'content-type': 'application/json', 'retry-after': '3' } }),
      500: () => ({
        status: 500,
        headers: { 'content-type': 'application/json', 'x-should-retry': 'true' },
        body: { type: 'error', error: { type: 'api_error', message: 'Internal server error' }, request_id: 'req_011CTestApiError00000000' },
      }),
      // Not an Anthropic status: what a proxy in front of it may answer (a text body).
      503: () => ({ status: 503, headers: { 'content-type': 'text/plain' }, body: 'upstream connect error or disconnect/reset before headers. reset reason: overflow' }),
      529: () => replay(f('error-529-overloaded')),
    },
  },
  // The recorded streams and answers come from several Claude models: the battery checks the
  // reported model only where the scenario and the text fixture agree.
  modelPerScenario: true,
});
