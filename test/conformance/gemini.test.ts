import { CONFORMANCE_SECRET, loadFixture, replay, runConformance } from 'switchyard-gateway/kit/testing';
import plugin from '../../plugins/gemini/index.ts';
import { fixturesOf } from '../helpers/repo.ts';

const f = (name: string) => loadFixture(fixturesOf('gemini'), name);
/** A google.rpc.Status error body, for the statuses no recording covers. */
const rpcError = (code: number, status: string, message: string, details?: unknown[]) => ({ status: code, body: { error: { code, message, status, ...(details ? { details } : {}) } } });

runConformance({
  name: 'gemini',
  plugin,
  provider: (url) => ({ plugin: 'gemini', baseUrl: url, apiKey: CONFORMANCE_SECRET }),
  model: 'gemini-2.0-flash',
  modelPerScenario: true,
  reportedModel: 'gemini-2.0-flash',
  scenarios: {
    text: { respond: () => replay(f('generate-multi-turn')), text: 'The Clockmaker' },
    textStream: { respond: () => replay(f('stream-basic')), text: 'Rayleigh scattering' },
    toolCall: { respond: () => replay(f('generate-function-call')), toolName: 'customDivide' },
    toolCallStream: { respond: () => replay(f('stream-function-call')), toolName: 'customDivide' },
    errors: {
      400: () => replay(f('vertex-error-400-invalid-argument')),
      // Gemini reports a bad key as 400 API_KEY_INVALID: the gateway's credential, so 502.
      401: () => replay(f('error-400-api-key-invalid')),
      403: () =>
        rpcError(403, 'PERMISSION_DENIED', 'Your API key was reported as leaked. Please use another API key.', [
          { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_SERVICE_BLOCKED', domain: 'googleapis.com' },
        ]),
      // Recorded on the SSE endpoint with Content-Type text/event-stream and a JSON body; replayed as is.
      404: () => replay(f('error-404-model-not-found-on-stream')),
      // Google sends no Retry-After header itself (its wait is RetryInfo in the body); one is added to check it is carried over.
      429: () => replay(f('error-429-resource-exhausted'), { headers: { 'content-type': 'application/json; charset=UTF-8', 'retry-after': '5' } }),
      500: () => rpcError(500, 'INTERNAL', 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting'),
      503: () => rpcError(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.'),
    },
  },
});
