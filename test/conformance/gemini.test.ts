import { runConformance } from './battery.ts';
import { loadFixture, replay } from '../helpers/fake-upstream.ts';

const f = (name: string) => loadFixture('gemini', name);

runConformance({
  name: 'gemini',
  capabilities: { streaming: true, tools: true, streamUsage: true },
  provider: (url) => ({ plugin: 'gemini', baseUrl: url, apiKey: 'test-upstream-secret' }),
  model: 'gemini-2.0-flash',
  modelPerScenario: true,
  reportedModel: 'gemini-2.0-flash',
  scenarios: {
    text: { respond: () => replay(f('generate-multi-turn')) },
    textStream: { respond: () => replay(f('stream-basic')), text: 'Rayleigh scattering' },
    toolCall: { respond: () => replay(f('generate-function-call')), toolName: 'customDivide' },
    toolCallStream: { respond: () => replay(f('stream-function-call')), toolName: 'customDivide' },
    errors: {
      400: () => replay(f('vertex-error-400-invalid-argument')),
      // Gemini reports a bad key as 400 API_KEY_INVALID: the gateway's credential, so 502.
      401: () => replay(f('error-400-api-key-invalid')),
      404: () => replay(f('error-404-model-not-found-on-stream'), { headers: { 'content-type': 'application/json' } }),
      429: () => replay(f('error-429-resource-exhausted'), { headers: { 'content-type': 'application/json', 'retry-after': '5' } }),
      500: () => ({ status: 500, body: { error: { code: 500, message: 'An internal error has occurred.', status: 'INTERNAL' } } }),
      503: () => ({ status: 503, body: { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } } }),
    },
  },
});
