/** The gateway the console suites run against: two upstreams (one to break), budgets, an admin key. */
import { fakeUpstream, loadFixture, replay, splitStream, streamAnswer, DEV_KEY } from 'switchyard-gateway/kit/testing';
import { fixturesOf } from '../helpers/repo.ts';

export const ADMIN_KEY = 'sk-admin-console-0123456789';
export const SEARCH_KEY = 'sk-search-console-0123456789';
export const UPSTREAM_SECRET = 'sk-upstream-secret-abcdef0123456789';
export { DEV_KEY };

const f = (name: string) => loadFixture(fixturesOf('openai'), name);
export const ok = () => replay(f('chat-basic'), { delayMs: 15 });
export const streamed = () => streamAnswer(splitStream(f('stream-tool-call')), { gapMs: 5 });
export const serverError = () => replay(f('error-500-server-error'));

export const good = fakeUpstream((req) => (req.body?.stream ? streamed() : ok()));
export const bad = fakeUpstream(ok);

export function consoleConfig(): string {
  return [
    'teams:',
    '  search: { budget: { usd: 50, period: monthly } }',
    'keys:',
    `  - { name: dev, key: ${DEV_KEY}, models: ["*"], limits: { rpm: 600, tpm: 1000000, concurrency: 8 }, budget: { usd: 5, period: daily } }`,
    `  - { name: search-prod, key: ${SEARCH_KEY}, team: search, models: ["*"] }`,
    'admin:',
    '  keys:',
    `    - { name: ops, key: ${ADMIN_KEY} }`,
    'providers:',
    `  good: { plugin: openai, baseUrl: "${good.url}/v1", apiKey: ${UPSTREAM_SECRET} }`,
    `  bad: { plugin: openai, baseUrl: "${bad.url}/v1", apiKey: "\${BAD_KEY:-${UPSTREAM_SECRET}}" }`,
    'models:',
    '  chat: { targets: [{ provider: good, model: gpt-4o }] }',
    '  flaky:',
    '    retry: { attempts: 1 }',
    '    cooldown: { failures: 1, windowMs: 60000, durationMs: 600000 }',
    '    targets: [{ provider: bad, model: gpt-4o }, { provider: good, model: gpt-4o }]',
  ].join('\n');
}

export async function adminFetch(url: string, path: string, init: RequestInit = {}, key = ADMIN_KEY): Promise<Response> {
  return fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, ...init.headers } });
}
