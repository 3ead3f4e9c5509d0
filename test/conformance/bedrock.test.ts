import { CONFORMANCE_SECRET, loadFixture, replay, runConformance } from 'switchyard-gateway/kit/testing';
import plugin from '../../plugins/bedrock/index.ts';
import { fixturesOf } from '../helpers/repo.ts';

const f = (name: string) => loadFixture(fixturesOf('bedrock'), name);
/** An AWS JSON error: the exception's name only in x-amzn-errortype, as Bedrock sends it. */
const awsError = (status: number, type: string, message: string) => ({
  status,
  headers: { 'content-type': 'application/json', 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'x-amzn-requestid': '0c7b3e0e-5d1f-4a43-9d4e-000000000000' },
  body: { message },
});

runConformance({
  name: 'bedrock',
  plugin,
  provider: (url) => ({ plugin: 'bedrock', region: 'us-east-1', endpoint: url, accessKeyId: 'AKIDCONFORMANCE', secretAccessKey: CONFORMANCE_SECRET }),
  // Bedrock does not echo the model: the answer names the target's model id.
  model: 'us.amazon.nova-micro-v1:0',
  scenarios: {
    text: { respond: () => replay(f('converse-basic-system')), text: 'How can I assist you today?' },
    // The recorded binary event stream, byte for byte.
    textStream: { respond: () => replay(f('converse-stream-basic')), text: 'The capital of France is Paris.' },
    toolCall: { respond: () => replay(f('converse-tool-use')), toolName: 'get_capital' },
    toolCallStream: { respond: () => replay(f('converse-stream-tool-use')), toolName: 'get_temperature' },
    errors: {
      400: () => replay(f('error-400-validation-exception')),
      // AWS answers a bad access key with 403 UnrecognizedClientException; a bad signature likewise.
      401: () => awsError(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.'),
      // No recording of AccessDenied exists (see the fixtures README): a body in Bedrock's shape.
      403: () => awsError(403, 'AccessDeniedException', "You don't have access to the model with the specified model ID."),
      404: () => awsError(404, 'ResourceNotFoundException', 'Model not found.'),
      429: () => replay(f('error-429-throttling')),
      500: () => replay(f('error-500-internal')),
      503: () => awsError(503, 'ServiceUnavailableException', 'Bedrock is unable to process your request.'),
    },
  },
});
