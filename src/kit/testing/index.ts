/**
 * `switchyard-gateway/kit/testing`: what this repository tests its providers with, public so a
 * plugin written elsewhere is tested the same way, offline. Needs vitest and the openai SDK.
 *
 * - a fake upstream on 127.0.0.1 answering with scripted or recorded responses, from a
 *   fixtures folder you name (`fakeUpstream`, `loadFixture`, `replay`);
 * - the real gateway started from a config object (`useTestGateway`, `startTestGateway`) and
 *   requests through the official SDK (`chatRequests`), answers checked against OpenAI's schemas
 *   (`expectValid`);
 * - the conformance battery every built-in provider passes (`runConformance`);
 * - inputs for a provider's pure functions (`callFactory`, `sseEventsOf`).
 *
 * @example
 * import { fileURLToPath } from 'node:url';
 * import { fakeUpstream, loadFixture, replay, useTestGateway, chatRequests, expectValid } from 'switchyard-gateway/kit/testing';
 *
 * const FIXTURES = new URL('./fixtures/', import.meta.url);
 * const upstream = fakeUpstream(() => replay(loadFixture(FIXTURES, 'chat-basic')));
 * const t = useTestGateway(() => ({
 *   providers: { acme: { plugin: fileURLToPath(new URL('./index.ts', import.meta.url)), baseUrl: upstream.url } },
 *   models: { acme: { targets: [{ provider: 'acme', model: 'acme-1' }] } },
 * }), { upstreams: [upstream] });
 * const { chat } = chatRequests(t, { model: 'acme' });
 *
 * it('answers like OpenAI', async () => expectValid('CreateChatCompletionResponse', await chat()));
 */
export { fakeUpstream, startFakeUpstream, streamAnswer, type FakeUpstream, type Handler, type RecordedRequest, type ScriptedResponse } from './fake-upstream.ts';
export { loadFixture, readFixtureFile, replay, splitStream, sseEventsOf, type Fixture, type FixtureFolder } from './fixtures.ts';
export { DEV_KEY, startTestGateway, useTestGateway, logLineFor, failureOf, type TestConfig, type TestGateway, type TestGatewayOptions, type UseTestGatewayOptions } from './gateway.ts';
export { chatRequests, readSseEvents, type RequestFields, type StreamedChat } from './requests.ts';
export { expectValid, type OpenAiSchema } from './schema.ts';
export { runConformance, CONFORMANCE_SECRET, type ProviderConformance, type Scenario } from './conformance.ts';
export { callFactory } from './provider-call.ts';
export { FakeClock, mulberry32 } from './clock.ts';
