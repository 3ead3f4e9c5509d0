/**
 * The vertex and vertex-anthropic providers end to end, against emulators on loopback: Google's
 * OAuth token endpoint (a service account's signed JWT), the metadata server (ADC on GCE/GKE),
 * STS (Workload Identity Federation from an OIDC token file) and a fake Vertex that accepts only a
 * currently valid token the emulator issued. The tokens come from google-auth-library itself.
 * Clients are the official SDKs: openai (chat, embeddings), @anthropic-ai/sdk (Messages with a
 * thinking signature round-trip), @google/genai (the Gemini way in, passed through).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { describe, expect, it } from 'vitest';
import { DEV_KEY, expectValid, failureOf, startTestGateway, useTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
import { fakeVertex, THINKING_SIGNATURE } from '../helpers/fake-vertex.ts';
import { googleEmulator, useGoogleEmulator } from '../helpers/google-emulator.ts';
import { configYaml, ROOT } from '../helpers/repo.ts';

const PROJECT = 'switchyard-test';
const EXPRESS_KEY = 'AQ.vertex-express-key-0123456789abcdef';
const emulator = googleEmulator();
const vertex = fakeVertex(emulator, { project: PROJECT, apiKey: EXPRESS_KEY });
const { oidcFile } = useGoogleEmulator(emulator);

/** A gateway.yaml with the given Vertex providers (YAML fragments), the emulator's credential files beside it. */
function gatewayFiles(): Record<string, string> {
  // Getters: the files are written when the gateway starts, once the emulator has its URL.
  return {
    get 'sa.json'() {
      return JSON.stringify(emulator.serviceAccount());
    },
    get 'wif.json'() {
      return JSON.stringify(emulator.externalAccount(oidcFile));
    },
    get 'user.json'() {
      return JSON.stringify(emulator.authorizedUser());
    },
  };
}

/** Each token the emulator issued, and the service account's private key: none may show in a log line or an answer. */
function expectNoSecrets(t: TestGateway, text: string) {
  for (const issued of emulator.issued) {
    expect(text).not.toContain(issued.token);
    expect(t.logText()).not.toContain(issued.token);
  }
  expect(t.logText()).not.toContain(EXPRESS_KEY);
  expect(t.logText()).not.toContain('PRIVATE KEY');
}

const identityOf = (t: TestGateway, provider: string) => t.gateway.runtime.providers.get(provider)?.instance?.identity?.();
const lastSent = () => vertex.requests.at(-1)!;

describe('each credential source serves a request through google-auth-library', () => {
  const t = useTestGateway(
    () =>
      configYaml({
        providers: [
          `  sa: { plugin: vertex, project: ${PROJECT}, location: us-central1, baseUrl: "${vertex.url}", auth: { type: google, credentialsFile: sa.json } }`,
          `  meta: { plugin: vertex, project: ${PROJECT}, baseUrl: "${vertex.url}", auth: { type: google } }`,
          `  wif: { plugin: vertex, project: ${PROJECT}, location: europe-west4, baseUrl: "${vertex.url}", auth: { type: google, credentials: "\${file:wif.json}" } }`,
          `  express: { plugin: vertex, baseUrl: "${vertex.url}", auth: { type: api-key, key: ${EXPRESS_KEY} } }`,
          `  user: { plugin: vertex, project: ${PROJECT}, baseUrl: "${vertex.url}", auth: { type: google, credentialsFile: user.json } }`,
        ].join('\n'),
        models: [
          '  user-flash: { retry: { attempts: 1 }, targets: [{ provider: user, model: gemini-2.5-flash }] }',
          '  sa-flash: { retry: { attempts: 1 }, targets: [{ provider: sa, model: gemini-2.5-flash }] }',
          '  meta-flash: { retry: { attempts: 1 }, targets: [{ provider: meta, model: gemini-2.5-flash }] }',
          '  wif-flash: { retry: { attempts: 1 }, targets: [{ provider: wif, model: gemini-2.5-flash }] }',
          '  express-flash: { retry: { attempts: 1 }, targets: [{ provider: express, model: gemini-2.5-flash }] }',
          '  sa-embed: { targets: [{ provider: sa, model: text-embedding-005 }] }',
          '  gemini-embed: { targets: [{ provider: sa, model: gemini-embedding-001 }] }',
        ].join('\n'),
      }),
    { upstreams: [vertex], files: gatewayFiles() },
  );

  const chat = (model: string) => t.client().chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });

  it('a service account key file: the JWT assertion is verified, the token sent as Bearer to the regional host path', async () => {
    const r = await chat('sa-flash');
    expectValid('CreateChatCompletionResponse', r);
    expect(r.choices[0].message.content).toBe('Hello from gemini-2.5-flash on Vertex.');
    const sent = lastSent();
    expect(sent.url).toBe(`/v1/projects/${PROJECT}/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent`);
    const bearer = String(sent.headers.authorization).replace('Bearer ', '');
    expect(emulator.valid(bearer)?.source).toBe('service-account');
    expect(sent.headers['x-goog-api-key']).toBeUndefined();
    expect(sent.headers['x-goog-user-project']).toBeUndefined();
    expect(sent.raw).not.toContain(DEV_KEY);
    expect(identityOf(t, 'sa')).toMatchObject({ source: 'google:service-account', refreshes: 1, failures: 0 });
    // The library dates the expiry from expires_in as it reads the answer: within a second of the emulator's.
    expect(Math.abs((identityOf(t, 'sa')?.expiresAt ?? 0) - (emulator.valid(bearer)?.expiresAt ?? 0))).toBeLessThan(1000);
    expect(emulator.refusals).toEqual([]);
  });

  it('Application Default Credentials on GCE/GKE: the metadata server, with Metadata-Flavor: Google', async () => {
    const r = await chat('meta-flash');
    expectValid('CreateChatCompletionResponse', r);
    const sent = lastSent();
    expect(sent.url).toBe(`/v1/projects/${PROJECT}/locations/global/publishers/google/models/gemini-2.5-flash:generateContent`);
    expect(emulator.valid(String(sent.headers.authorization).replace('Bearer ', ''))?.source).toBe('metadata-server');
    expect(identityOf(t, 'meta')).toMatchObject({ source: 'google:metadata-server', failures: 0 });
    expect(emulator.refusals).toEqual([]);
  });

  it('Workload Identity Federation: an external_account JSON (from ${file:}) exchanges the OIDC token file at STS', async () => {
    const r = await chat('wif-flash');
    expectValid('CreateChatCompletionResponse', r);
    const sent = lastSent();
    expect(sent.url).toBe(`/v1/projects/${PROJECT}/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent`);
    expect(emulator.valid(String(sent.headers.authorization).replace('Bearer ', ''))?.source).toBe('external-account');
    expect(identityOf(t, 'wif')).toMatchObject({ source: 'google:external-account', failures: 0 });
    expect(emulator.refusals).toEqual([]);
  });

  it("a user's gcloud ADC file (authorized_user): the refresh token exchanged at the token endpoint", async () => {
    const r = await chat('user-flash');
    expectValid('CreateChatCompletionResponse', r);
    expect(emulator.valid(String(lastSent().headers.authorization).replace('Bearer ', ''))?.source).toBe('authorized-user');
    // The user's quota project, as gcloud writes it into the ADC file, names who pays.
    expect(lastSent().headers['x-goog-user-project']).toBe('switchyard-billing');
    expect(identityOf(t, 'user')).toMatchObject({ source: 'google:authorized-user', failures: 0 });
    expect(emulator.refusals).toEqual([]);
  });

  it('Express mode: the API key in x-goog-api-key on the project-less path, no token fetched', async () => {
    const before = { ...emulator.calls };
    const r = await chat('express-flash');
    expectValid('CreateChatCompletionResponse', r);
    const sent = lastSent();
    expect(sent.url).toBe('/v1/publishers/google/models/gemini-2.5-flash:generateContent');
    expect(sent.headers['x-goog-api-key']).toBe(EXPRESS_KEY);
    expect(sent.headers.authorization).toBeUndefined();
    expect(emulator.calls).toEqual(before);
    expect(identityOf(t, 'express')).toEqual({ source: 'api-key', refreshes: 0, failures: 0 });
  });

  it('tokens are fetched once and reused, not per request', async () => {
    const before = emulator.calls['service-account'];
    await Promise.all(Array.from({ length: 20 }, () => chat('sa-flash')));
    expect(emulator.calls['service-account']).toBe(before);
  });

  it('streams: :streamGenerateContent?alt=sse translated to chunks', async () => {
    const stream = await t.client().chat.completions.create({ model: 'sa-flash', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Hello from gemini-2.5-flash on Vertex.');
    expect(lastSent().url).toBe(`/v1/projects/${PROJECT}/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse`);
    expect(lastSent().headers.accept).toBe('text/event-stream');
  });

  it('embeddings: :predict with instances, Vertex token counts; gemini-embedding-001 one text a request', async () => {
    const r = await t.client().embeddings.create({ model: 'sa-embed', input: ['one two', 'three'], dimensions: 3, encoding_format: 'float' });
    expect(r.data.map((d) => d.embedding)).toEqual([
      [0.1, 0.11, 0.12],
      [0.2, 0.21, 0.22],
    ]);
    expect(r.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
    expect(lastSent().url).toBe(`/v1/projects/${PROJECT}/locations/us-central1/publishers/google/models/text-embedding-005:predict`);
    expect(lastSent().body).toEqual({ instances: [{ content: 'one two' }, { content: 'three' }], parameters: { outputDimensionality: 3 } });

    vertex.reset();
    const g = await t.client().embeddings.create({ model: 'gemini-embed', input: ['a', 'b'] });
    expect(g.data.map((d) => d.index)).toEqual([0, 1]);
    expect(vertex.requests.map((r) => r.body.instances.length)).toEqual([1, 1]);
  });

  it('@google/genai to the Gemini way in: the body passes through to Vertex as it came', async () => {
    const ai = new GoogleGenAI({ apiKey: DEV_KEY, httpOptions: { baseUrl: t.url, retryOptions: { attempts: 1 } } });
    const contents = [{ role: 'user', parts: [{ text: 'hi' }] }];
    const r = await ai.models.generateContent({ model: 'sa-flash', contents, config: { temperature: 0.2, thinkingConfig: { thinkingBudget: 128 } } });
    expect(r.text).toBe('Hello from gemini-2.5-flash on Vertex.');
    expect(lastSent().url).toBe(`/v1/projects/${PROJECT}/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent`);
    expect(lastSent().body).toEqual({ contents, generationConfig: { temperature: 0.2, thinkingConfig: { thinkingBudget: 128 } } });

    let streamed = '';
    for await (const chunk of await ai.models.generateContentStream({ model: 'sa-flash', contents })) streamed += chunk.text ?? '';
    expect(streamed).toBe('Hello from gemini-2.5-flash on Vertex.');
    expect(lastSent().url).toBe(`/v1/projects/${PROJECT}/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse`);
    expect(lastSent().body).toEqual({ contents });

    // countTokens passes through too: Vertex counts the client's own request (the fields it counts, at its top level).
    const n = await ai.models.countTokens({ model: 'sa-flash', contents });
    expect(n.totalTokens).toBe(JSON.stringify(contents).length);
    expect(lastSent().url).toBe(`/v1/projects/${PROJECT}/locations/us-central1/publishers/google/models/gemini-2.5-flash:countTokens`);
    expect(lastSent().body).toEqual({ contents });
  });

  it('Anthropic count_tokens to a Vertex Gemini model: Vertex counts the translation, exact', async () => {
    const res = await fetch(`${t.url}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'x-api-key': DEV_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sa-flash', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-switchyard-token-count')).toBe('exact');
    const contents = [{ role: 'user', parts: [{ text: 'hi' }] }];
    expect(await res.json()).toEqual({ input_tokens: JSON.stringify(contents).length });
    expect(lastSent().url).toBe(`/v1/projects/${PROJECT}/locations/us-central1/publishers/google/models/gemini-2.5-flash:countTokens`);
    // The fields Vertex counts at its top level, nothing it refuses (no model, no generateContentRequest).
    expect(Object.keys(lastSent().body).sort()).toEqual(['contents', 'generationConfig']);
    expect(lastSent().body.contents).toEqual(contents);
  });

  it("Vertex's own errors arrive in the client's envelope with a request id, no token in them", async () => {
    vertex.setHandler(() => ({ status: 429, body: { error: { code: 429, message: 'Resource exhausted. Please try again later.', status: 'RESOURCE_EXHAUSTED' } } }));
    const err = await failureOf(chat('sa-flash'));
    expect(err.status).toBe(429);
    expect(err.message).toContain('Resource exhausted');
    expect(err.headers?.get('x-request-id')).toBeTruthy();
    expectNoSecrets(t, JSON.stringify(err.error));
  });
});

describe('Application Default Credentials from GOOGLE_APPLICATION_CREDENTIALS', () => {
  const vertex = fakeVertex(emulator, { project: PROJECT });
  const keyFile = path.join(mkdtempSync(path.join(tmpdir(), 'switchyard-adc-')), 'adc.json');
  const t = useTestGateway(
    () => {
      writeFileSync(keyFile, JSON.stringify(emulator.serviceAccount('adc@switchyard-test.iam.gserviceaccount.com')));
      return configYaml({
        providers: `  adc: { plugin: vertex, project: ${PROJECT}, baseUrl: "${vertex.url}", auth: { type: google } }`,
        models: '  adc-flash: { retry: { attempts: 1 }, targets: [{ provider: adc, model: gemini-2.5-flash }] }',
      });
    },
    { upstreams: [vertex], processEnv: { GOOGLE_APPLICATION_CREDENTIALS: keyFile } },
  );

  it('the service account key the variable names, ahead of the metadata server', async () => {
    const before = emulator.calls['metadata-server'];
    const r = await t.client().chat.completions.create({ model: 'adc-flash', messages: [{ role: 'user', content: 'hi' }] });
    expectValid('CreateChatCompletionResponse', r);
    expect(emulator.valid(String(vertex.requests.at(-1)!.headers.authorization).replace('Bearer ', ''))?.source).toBe('service-account');
    expect(identityOf(t, 'adc')).toMatchObject({ source: 'google:service-account', failures: 0 });
    expect(emulator.calls['metadata-server']).toBe(before);
  });
});

describe('secrets and credentials that cannot be used', () => {
  const vertex = fakeVertex(emulator, { project: PROJECT, apiKey: EXPRESS_KEY });
  const t = useTestGateway(
    () =>
      configYaml({
        providers: [
          `  express: { plugin: vertex, baseUrl: "${vertex.url}", auth: { type: api-key, key: ${EXPRESS_KEY} } }`,
          `  nofile: { plugin: vertex, project: ${PROJECT}, baseUrl: "${vertex.url}", auth: { type: google, credentialsFile: missing/sa.json } }`,
          `  badjson: { plugin: vertex, project: ${PROJECT}, baseUrl: "${vertex.url}", auth: { type: google, credentials: "{\\"type\\": \\"gdch_service_account\\"}" } }`,
          `  badimp: { plugin: vertex, project: ${PROJECT}, baseUrl: "${vertex.url}", auth: { type: google, credentialsFile: bad-imp.json } }`,
        ].join('\n'),
        models: [
          '  express-flash: { retry: { attempts: 1 }, targets: [{ provider: express, model: gemini-2.5-flash }] }',
          '  nofile-flash: { targets: [{ provider: nofile, model: gemini-2.5-flash }] }',
          '  badjson-flash: { targets: [{ provider: badjson, model: gemini-2.5-flash }] }',
          '  badimp-flash: { targets: [{ provider: badimp, model: gemini-2.5-flash }] }',
        ].join('\n'),
      }),
    {
      upstreams: [vertex],
      // An impersonation whose URL is not the IAM Credentials API's generateAccessToken.
      files: {
        'bad-imp.json': JSON.stringify({ type: 'impersonated_service_account', service_account_impersonation_url: 'https://example.test/token', source_credentials: { type: 'authorized_user' } }),
      },
    },
  );

  it('an Express key (auth.key, a nested secret option) echoed by the upstream is scrubbed from the answer and the log', async () => {
    vertex.setHandler(() => ({ status: 400, body: { error: { code: 400, message: `API key not valid: ${EXPRESS_KEY}`, status: 'INVALID_ARGUMENT' } } }));
    const err = await failureOf(t.client().chat.completions.create({ model: 'express-flash', messages: [{ role: 'user', content: 'hi' }] }));
    expect(err.status).toBe(400);
    expect(err.message).toContain('API key not valid');
    expect(JSON.stringify(err.error)).not.toContain(EXPRESS_KEY);
    expect(t.logText()).not.toContain(EXPRESS_KEY);
  });

  it('a credentials file that is not there, or a credential type not driven here: the provider is unavailable (503), saying why', async () => {
    for (const model of ['nofile-flash', 'badjson-flash', 'badimp-flash']) {
      const err = await failureOf(t.client().chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }));
      expect(err.status).toBe(503);
    }
    // The reason is the operator's (a config warning, the banner, /readyz), not the client's.
    expect(t.gateway.runtime.providers.get('nofile')?.unavailable).toMatch(/^auth\.credentialsFile .*missing\/sa\.json cannot be used: ENOENT$/);
    // (The redactor masks any 12-character run of the credentials JSON, a secret option: the type's name among them.)
    expect(t.gateway.runtime.providers.get('badjson')?.unavailable).toMatch(/^Google credentials of type .* are not supported here: use a /);
    expect(t.gateway.runtime.providers.get('badimp')?.unavailable).toMatch(/ending in \/v1\/projects\/-\/serviceAccounts\/\{email\}:generateAccessToken$/);
    expect(vertex.requests).toEqual([]);
  });
});

describe('configuration errors', () => {
  const start = (provider: string) => startTestGateway(configYaml({ providers: `  v: ${provider}`, models: '  m: { targets: [{ provider: v, model: gemini-2.5-flash }] }' }));

  it('Google identity without a project; an auth block of the wrong shape; an api-key for Claude', async () => {
    await expect(start('{ plugin: vertex, auth: { type: google } }')).rejects.toThrow(/project is required/);
    await expect(start('{ plugin: vertex, project: p, auth: { type: google, credentialsFile: a.json, credentials: "{}" } }')).rejects.toThrow(
      /auth\.credentialsFile and auth\.credentials both name a credential/,
    );
    await expect(start('{ plugin: vertex, project: p, auth: { type: google, key: abcdefgh } }')).rejects.toThrow(/auth\.key does not go with auth\.type google/);
    await expect(start('{ plugin: vertex, project: p, auth: { type: api-key } }')).rejects.toThrow(/providers\.v\.auth: missing required field "key"/);
    await expect(start(`{ plugin: vertex-anthropic, project: p, auth: { type: api-key, key: ${EXPRESS_KEY} } }`)).rejects.toThrow(/providers\.v\.auth/);
  });
});

describe("the README's Vertex AI example", () => {
  it('loads: every provider passes its schema; the GKE one gets a token from the metadata server, the others say what they lack', async () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const block = /#### Vertex AI[\s\S]*?```yaml\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block, 'the README has a yaml block under "#### Vertex AI"').toBeTruthy();
    const names = [...block!.matchAll(/^ {2}([\w-]+):/gm)].map((m) => m[1]);
    expect(names).toEqual(['vertex-sa', 'vertex-secret', 'vertex-gke', 'vertex-wif', 'vertex-imp', 'vertex-express']);
    const models = names.map((n) => `  ${n}: { targets: [{ provider: ${n}, model: gemini-2.5-flash }] }`).join('\n');
    const t = await startTestGateway(`keys: [{ name: dev, key: ${DEV_KEY}, models: ["*"] }]\n${block}models:\n${models}\n`);
    try {
      const handle = (name: string) => t.gateway.runtime.providers.get(name);
      expect(handle('vertex-gke')?.instance?.identity?.()).toMatchObject({ source: 'google:metadata-server', refreshes: 1 });
      // (Part of the path is masked: the unread ${file:} of vertex-secret counts as a secret, and shares a 12-character run with it.)
      expect(handle('vertex-sa')?.unavailable).toMatch(/^auth\.credentialsFile .*-sa\.json cannot be used: ENOENT$/);
      expect(handle('vertex-wif')?.unavailable).toMatch(/wif-credentials\.json cannot be used: ENOENT/);
      expect(handle('vertex-imp')?.unavailable).toMatch(/impersonated\.json cannot be used: ENOENT/);
      expect(handle('vertex-secret')?.unavailable).toMatch(/\/var\/run\/secrets\/vertex\/sa\.json/);
      expect(handle('vertex-express')?.unavailable).toMatch(/VERTEX_API_KEY/);
    } finally {
      await t.close();
    }
  });
});

describe('Claude on Vertex (vertex-anthropic): rawPredict with the Messages body', () => {
  const vertex = fakeVertex(emulator, { project: PROJECT });
  const lastSent = () => vertex.requests.at(-1)!;
  const t = useTestGateway(
    () =>
      configYaml({
        providers: `  claude: { plugin: vertex-anthropic, project: ${PROJECT}, location: us-east5, baseUrl: "${vertex.url}", auth: { type: google, credentialsFile: sa.json } }`,
        models: '  sonnet: { retry: { attempts: 1 }, targets: [{ provider: claude, model: claude-sonnet-4-5@20250929 }] }',
      }),
    { upstreams: [vertex], files: gatewayFiles() },
  );
  const anthropic = () => new Anthropic({ apiKey: DEV_KEY, baseURL: t.url, maxRetries: 0 });
  const claudePath = (method: string) => `/v1/projects/${PROJECT}/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:${method}`;

  it('openai chat → :rawPredict, anthropic_version vertex-2023-10-16 in the body, no model', async () => {
    const r = await t.client().chat.completions.create({ model: 'sonnet', messages: [{ role: 'user', content: 'hi' }] });
    expectValid('CreateChatCompletionResponse', r);
    expect(r.choices[0].message.content).toBe('Hello from claude-sonnet-4-5@20250929 on Vertex.');
    const sent = lastSent();
    expect(sent.url).toBe(claudePath('rawPredict'));
    expect(sent.body.anthropic_version).toBe('vertex-2023-10-16');
    expect(sent.body).not.toHaveProperty('model');
    expect(sent.headers['anthropic-version']).toBeUndefined();
    expect(emulator.valid(String(sent.headers.authorization).replace('Bearer ', ''))).toBeTruthy();
    expect(identityOf(t, 'claude')).toMatchObject({ source: 'google:service-account' });
  });

  it('openai chat streaming → :streamRawPredict with stream: true', async () => {
    const stream = await t.client().chat.completions.create({ model: 'sonnet', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Hello from claude-sonnet-4-5@20250929 on Vertex.');
    expect(lastSent().url).toBe(claudePath('streamRawPredict'));
    expect(lastSent().body.stream).toBe(true);
  });

  it('@anthropic-ai/sdk Messages pass through: the thinking signature round-trips, cache_control and anthropic-beta arrive unchanged', async () => {
    const beta = 'interleaved-thinking-2025-05-14';
    const first = await anthropic().messages.create(
      { model: 'sonnet', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'hi' }] },
      { headers: { 'anthropic-beta': beta } },
    );
    const thinking = first.content.find((b) => b.type === 'thinking');
    expect(thinking).toEqual({ type: 'thinking', thinking: 'The user greets me.', signature: THINKING_SIGNATURE });
    expect(lastSent().headers['anthropic-beta']).toBe(beta);

    const messages: Anthropic.MessageParam[] = [
      { role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] },
      { role: 'assistant', content: first.content as Anthropic.ContentBlockParam[] },
      { role: 'user', content: 'and again' },
    ];
    const second = await anthropic().messages.create(
      { model: 'sonnet', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }], messages },
      { headers: { 'anthropic-beta': beta } },
    );
    expect(second.usage.cache_read_input_tokens).toBe(12);
    const sent = lastSent();
    expect(sent.url).toBe(claudePath('rawPredict'));
    expect(sent.headers['anthropic-beta']).toBe(beta);
    const { anthropic_version, ...rest } = sent.body;
    expect(anthropic_version).toBe('vertex-2023-10-16');
    // Everything the client sent, byte for byte, but the model (in the path on Vertex).
    expect(rest).toEqual({ max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }], messages });
    expect(sent.body.messages[1].content[0].signature).toBe(THINKING_SIGNATURE);
  });

  it('@anthropic-ai/sdk streaming with thinking: :streamRawPredict, the signature delta delivered', async () => {
    const stream = anthropic().messages.stream({ model: 'sonnet', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'hi' }] });
    const message = await stream.finalMessage();
    const thinking = message.content.find((b) => b.type === 'thinking');
    expect(thinking?.type === 'thinking' && thinking.signature.length).toBeGreaterThan(10);
    expect(lastSent().url).toBe(claudePath('streamRawPredict'));
  });

  it('count_tokens → the count-tokens model, the model in the body', async () => {
    const r = await anthropic().messages.countTokens({ model: 'sonnet', messages: [{ role: 'user', content: 'hi' }] });
    expect(r.input_tokens).toBeGreaterThan(0);
    expect(lastSent().url).toBe(`/v1/projects/${PROJECT}/locations/us-east5/publishers/anthropic/models/count-tokens:rawPredict`);
    expect(lastSent().body.model).toBe('claude-sonnet-4-5@20250929');
  });
});
