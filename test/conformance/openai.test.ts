import { CONFORMANCE_SECRET, loadFixture, replay, runConformance } from 'switchyard-gateway/kit/testing';
import plugin from '../../plugins/openai/index.ts';
import { fixturesOf } from '../helpers/repo.ts';

const f = (name: string) => loadFixture(fixturesOf('openai'), name);

runConformance({
  name: 'openai',
  plugin,
  provider: (url) => ({ plugin: 'openai', baseUrl: `${url}/v1`, apiKey: CONFORMANCE_SECRET }),
  model: 'gpt-4o',
  reportedModel: 'gpt-4o-2024-08-06',
  scenarios: {
    text: { respond: () => replay(f('chat-basic')), text: 'Paris' },
    textStream: { respond: () => replay(f('stream-structured-output')) },
    toolCall: { respond: () => replay(f('chat-tool-call')) },
    toolCallStream: { respond: () => replay(f('stream-tool-call')), toolName: 'get_capital' },
    errors: {
      400: () => replay(f('error-400-param-not-supported')),
      401: () => replay(f('error-401-invalid-api-key')),
      404: () => replay(f('error-404-model-not-found-groq')),
      429: () => replay(f('error-429-tokens-rate-limit'), { headers: { 'content-type': 'application/json', 'retry-after': '1' } }),
      500: () => replay(f('error-500-server-error')),
    },
  },
});
