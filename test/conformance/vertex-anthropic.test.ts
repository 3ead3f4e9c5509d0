/**
 * The vertex-anthropic provider joins the conformance battery with a service account token from
 * the Google emulator (test/helpers/google-emulator.ts), on recorded Anthropic Messages payloads:
 * Claude on Vertex answers rawPredict and streamRawPredict with Anthropic's own bodies and events.
 * Vertex's own refusals (authentication, permission) come in google.rpc's envelope.
 */
import { loadFixture, replay, runConformance } from 'switchyard-gateway/kit/testing';
import plugin from '../../plugins/vertex-anthropic/index.ts';
import { googleEmulator, useGoogleEmulator } from '../helpers/google-emulator.ts';
import { fixturesOf } from '../helpers/repo.ts';

const f = (name: string) => loadFixture(fixturesOf('anthropic'), name);
const emulator = googleEmulator();
useGoogleEmulator(emulator);

runConformance({
  name: 'vertex-anthropic',
  plugin,
  provider: (url) => ({ plugin: 'vertex-anthropic', project: 'switchyard-test', location: 'us-east5', baseUrl: url, auth: { type: 'google', credentials: JSON.stringify(emulator.serviceAccount()) } }),
  model: 'claude-3-opus@20240229',
  reportedModel: 'claude-3-opus-20240229',
  scenarios: {
    text: { respond: () => replay(f('messages-system-prompt')), text: 'Paris' },
    textStream: { respond: () => replay(f('stream-basic')) },
    toolCall: { respond: () => replay(f('messages-tool-use')), toolName: 'test_tool' },
    toolCallStream: { respond: () => replay(f('stream-tool-use')), toolName: 'get_weather' },
    errors: {
      400: () => replay(f('error-400-invalid-request')),
      401: () => ({ status: 401, body: { error: { code: 401, message: 'Request had invalid authentication credentials. Expected OAuth 2 access token.', status: 'UNAUTHENTICATED' } } }),
      403: () => ({ status: 403, body: { error: { code: 403, message: "Permission 'aiplatform.endpoints.predict' denied.", status: 'PERMISSION_DENIED' } } }),
      404: () => replay(f('error-404-not-found-model')),
      429: () => replay(f('error-429-rate-limit'), { headers: { 'content-type': 'application/json', 'retry-after': '3' } }),
      500: () => ({ status: 500, body: { type: 'error', error: { type: 'api_error', message: 'Internal server error' } } }),
      503: () => ({ status: 503, body: { error: { code: 503, message: 'The service is currently unavailable.', status: 'UNAVAILABLE' } } }),
      529: () => replay(f('error-529-overloaded')),
    },
  },
  modelPerScenario: true,
});
