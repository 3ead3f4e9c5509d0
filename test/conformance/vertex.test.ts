/**
 * The vertex provider joins the conformance battery in Express mode (an API key, so no token
 * endpoint is needed), on recorded Gemini payloads: Vertex answers generateContent with the
 * same bodies and streams (vertex-stream-basic is recorded from Vertex itself).
 */
import { CONFORMANCE_SECRET, loadFixture, replay, runConformance } from 'switchyard-gateway/kit/testing';
import plugin from '../../plugins/vertex/index.ts';
import { fixturesOf } from '../helpers/repo.ts';

const f = (name: string) => loadFixture(fixturesOf('gemini'), name);
/** A google.rpc.Status error body, for the statuses no recording covers. */
const rpcError = (code: number, status: string, message: string) => ({ status: code, body: { error: { code, message, status } } });

runConformance({
  name: 'vertex',
  plugin,
  provider: (url) => ({ plugin: 'vertex', baseUrl: url, auth: { type: 'api-key', key: CONFORMANCE_SECRET } }),
  model: 'gemini-2.0-flash',
  modelPerScenario: true,
  reportedModel: 'gemini-2.0-flash',
  scenarios: {
    text: { respond: () => replay(f('generate-multi-turn')), text: 'The Clockmaker' },
    textStream: { respond: () => replay(f('vertex-stream-basic')) },
    toolCall: { respond: () => replay(f('generate-function-call')), toolName: 'customDivide' },
    toolCallStream: { respond: () => replay(f('stream-function-call')), toolName: 'customDivide' },
    errors: {
      400: () => replay(f('vertex-error-400-invalid-argument')),
      401: () => rpcError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.'),
      403: () =>
        rpcError(
          403,
          'PERMISSION_DENIED',
          "Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/p/locations/global/publishers/google/models/gemini-2.0-flash'.",
        ),
      404: () => rpcError(404, 'NOT_FOUND', 'Publisher Model `projects/p/locations/global/publishers/google/models/gemini-0` was not found or your project does not have access to it.'),
      429: () => ({ ...rpcError(429, 'RESOURCE_EXHAUSTED', 'Resource exhausted. Please try again later.'), headers: { 'content-type': 'application/json; charset=UTF-8', 'retry-after': '5' } }),
      500: () => rpcError(500, 'INTERNAL', 'Internal error encountered.'),
      503: () => rpcError(503, 'UNAVAILABLE', 'The service is currently unavailable.'),
    },
  },
});
