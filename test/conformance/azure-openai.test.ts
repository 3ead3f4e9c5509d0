import { CONFORMANCE_SECRET, loadFixture, replay, runConformance } from 'switchyard-gateway/kit/testing';
import plugin from '../../plugins/azure-openai/index.ts';
import { fixturesOf } from '../helpers/repo.ts';

const f = (name: string) => loadFixture(fixturesOf('azure'), name);
const openai = (name: string) => loadFixture(fixturesOf('openai'), name);

runConformance({
  name: 'azure-openai',
  plugin,
  provider: (url) => ({ plugin: 'azure-openai', endpoint: url, apiKey: CONFORMANCE_SECRET }),
  model: 'gpt-5-nano',
  reportedModel: 'gpt-5-nano-2025-08-07',
  modelPerScenario: true,
  scenarios: {
    text: { respond: () => replay(f('chat-basic')) },
    textStream: { respond: () => replay(f('stream-model-router-usage')) },
    // Azure serves OpenAI's own format for tools: the recorded OpenAI answers stand in.
    toolCall: { respond: () => replay(openai('chat-tool-call')) },
    toolCallStream: { respond: () => replay(openai('stream-tool-call')), toolName: 'get_capital' },
    errors: {
      400: () => replay(f('error-400-content-filter')),
      401: () => ({
        status: 401,
        body: {
          error: {
            code: '401',
            message:
              'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
          },
        },
      }),
      // Not recorded: Azure's shapes for a network-restricted resource and an overloaded region.
      403: () => ({ status: 403, body: { error: { code: '403', message: 'Public access is disabled. Please configure private endpoint.' } } }),
      404: () => ({ status: 404, body: { error: { code: 'DeploymentNotFound', message: 'The API deployment for this resource does not exist.' } } }),
      429: () => replay(f('error-429-rate-limit')),
      500: () => replay(openai('error-500-server-error')),
      503: () => ({ status: 503, body: { error: { code: 'ServiceUnavailable', message: 'The service is temporarily unable to process your request. Please try again later.' } } }),
    },
  },
});
