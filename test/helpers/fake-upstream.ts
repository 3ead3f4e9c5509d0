/** Kept for the plugins' unit tests (plugins/<name>/*.test.ts), which import it by this path: the kit's fake upstream, and fixtures by provider name. */
import { loadFixture as loadFrom, type Fixture } from 'switchyard-gateway/kit/testing';
import { fixturesOf } from './repo.ts';

export { replay, splitStream, startFakeUpstream, type FakeUpstream, type Fixture, type Handler, type RecordedRequest, type ScriptedResponse } from 'switchyard-gateway/kit/testing';

/** test/fixtures/<provider>/<name>.* */
export function loadFixture(provider: Parameters<typeof fixturesOf>[0], name: string): Fixture {
  return loadFrom(fixturesOf(provider), name);
}
