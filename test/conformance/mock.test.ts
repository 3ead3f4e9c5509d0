import { runConformance } from 'switchyard-gateway/kit/testing';
import plugin from '../../plugins/mock/index.ts';

const unused = () => ({ status: 500, body: 'the mock provider never calls an upstream' });

runConformance({
  name: 'mock',
  plugin,
  provider: () => ({ plugin: 'mock' }),
  model: 'mock-1',
  scenarios: {
    text: { respond: unused, text: 'mock provider' },
    textStream: { respond: unused, text: 'mock provider' },
    toolCall: { respond: unused, toolName: 'get_weather' },
    toolCallStream: { respond: unused, toolName: 'get_weather' },
    // The mock answers offline and never fails: there is no upstream error to map.
    errors: {},
  },
});
