import { runConformance } from './battery.ts';
import { loadFixture, replay } from '../helpers/fake-upstream.ts';

const f = (name: string) => loadFixture('anthropic', name);

runConformance({
  name: 'anthropic',
  capabilities: { streaming: true, tools: true, streamUsage: true },
  provider: (url) => ({ plugin: 'anthropic', baseUrl: url, apiKey: 'test-upstream-secret' }),
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
      404: () => replay(f('error-404-not-found-model')),
      429: () => replay(f('error-429-rate-limit'), { headers: { 'content-type': 'application/json', 'retry-after': '3' } }),
      500: () => ({ status: 500, body: { type: 'error', error: { type: 'api_error', message: 'Internal server error' } } }),
      529: () => replay(f('error-529-overloaded')),
    },
  },
  // The recorded streams and answers come from several Claude models: the battery checks the
  // reported model only where the scenario and the text fixture agree.
  modelPerScenario: true,
});
