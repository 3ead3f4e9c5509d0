/**
 * AWS on loopback for the identity tests: one credential registry behind a fake STS
 * (`AssumeRoleWithWebIdentity`, `AssumeRole`; query protocol, XML answers), a fake IMDSv2
 * (token, role name, credentials), a fake ECS / EKS Pod Identity container endpoint, and a fake
 * Bedrock Runtime that answers only requests signed (SigV4, re-computed with the AWS SDK's
 * signer) with credentials the emulator issued and that are still valid, or carrying a known
 * Bedrock API key. Credentials are short-lived on purpose: tests watch them being refreshed.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignatureV4 } from '@smithy/signature-v4';
import { Hash } from '@smithy/hash-node';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import { startFakeUpstream, streamAnswer, type FakeUpstream, type RecordedRequest, type ScriptedResponse } from 'switchyard-gateway/kit/testing';

export interface IssuedKeys {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** Ms since the epoch; absent for long-term keys. */
  expiresAt?: number;
  /** Who got them: `sts:AssumeRole`, `imds`, `container`, `static`... */
  issuer: string;
}

/** One STS call as the emulator saw it (the form parameters, the signer's key id when signed). */
export interface StsCall {
  action: string;
  params: Record<string, string>;
  signedBy?: string;
}

export interface AwsEmulator {
  /** Base URL of the fake STS (for AWS_ENDPOINT_URL_STS). */
  stsUrl: string;
  /** Base URL of the fake IMDS (for AWS_EC2_METADATA_SERVICE_ENDPOINT). */
  imdsUrl: string;
  /** Full URI of the container credentials endpoint (AWS_CONTAINER_CREDENTIALS_FULL_URI). */
  containerUrl: string;
  /** Base URL of the fake IAM Identity Center portal (for AWS_ENDPOINT_URL_SSO). */
  ssoUrl: string;
  /** The SSO access token the portal accepts (the `aws sso login` cache holds it). */
  ssoAccessToken: string;
  ssoCalls: number;
  /** The token the container endpoint wants in `Authorization`. */
  containerToken: string;
  /** The web identity token STS accepts (write it to AWS_WEB_IDENTITY_TOKEN_FILE). */
  webIdentityToken: string;
  bedrock: FakeUpstream;
  /** Lifetime of the temporary credentials issued from now on. */
  lifetimeMs: number;
  /** While set, STS, IMDS and the container endpoint refuse to issue (403 / 500). */
  failing: boolean;
  stsCalls: StsCall[];
  imdsCalls: number;
  containerCalls: number;
  /** Requests the fake Bedrock refused, with why. */
  refused: string[];
  /** Every key issued, by access key id. */
  issued: Map<string, IssuedKeys>;
  /** Long-term keys (a credentials file's, say), known to the fake services. */
  staticKeys(): IssuedKeys;
  /** A Bedrock API key the fake Bedrock accepts. */
  readonly apiKey: string;
  /**
   * Checks a signed request serialized by someone else (Google's WIF subject token is a signed
   * STS GetCallerIdentity, as AWS would verify it): undefined when it is signed with live keys
   * issued here, else why not.
   */
  verifySignedRequest(signed: { url: string; method: string; headers: Record<string, string> }, service?: string): Promise<string | undefined>;
  close(): Promise<void>;
}

const REGION = 'us-east-1';
const ROLE_NAME = 'switchyard-node-role';

export async function startAwsEmulator(options: { lifetimeMs?: number } = {}): Promise<AwsEmulator> {
  const issued = new Map<string, IssuedKeys>();
  const apiKey = `ABSK${randomBytes(24).toString('base64url')}`;
  const issue = (issuer: string): IssuedKeys => {
    const keys: IssuedKeys = {
      accessKeyId: `ASIA${randomBytes(8).toString('hex').toUpperCase()}`,
      secretAccessKey: randomBytes(30).toString('base64'),
      sessionToken: randomBytes(48).toString('base64'),
      expiresAt: Date.now() + emulator.lifetimeMs,
      issuer,
    };
    issued.set(keys.accessKeyId, keys);
    return keys;
  };
  /** The issued keys a request's `Authorization` names, if they are still valid. */
  const validKeysOf = (authorization: string): IssuedKeys | string => {
    const akid = /Credential=([^/]+)\//.exec(authorization)?.[1];
    const keys = akid ? issued.get(akid) : undefined;
    if (!keys) return 'unknown access key';
    if (keys.expiresAt !== undefined && Date.now() >= keys.expiresAt) return `expired credentials (${keys.issuer})`;
    return keys;
  };

  const sts = await listen(async (req, body) => {
    const params = Object.fromEntries(new URLSearchParams(body));
    const call: StsCall = { action: params.Action ?? '', params };
    if (call.action === 'AssumeRole') {
      const keys = validKeysOf(String(req.headers.authorization ?? ''));
      if (typeof keys === 'string' || !(await signatureMatches(req, body, keys, 'sts'))) return stsError(403, 'InvalidClientTokenId', 'The security token included in the request is invalid.');
      call.signedBy = keys.accessKeyId;
    } else if (call.action === 'AssumeRoleWithWebIdentity') {
      if (params.WebIdentityToken !== emulator.webIdentityToken) return stsError(400, 'InvalidIdentityToken', 'Couldn’t retrieve verification key from your identity provider');
    } else {
      return stsError(400, 'InvalidAction', `Could not find operation ${call.action}`);
    }
    emulator.stsCalls.push(call);
    if (emulator.failing) return stsError(403, 'AccessDenied', 'Not authorized to perform sts:AssumeRole');
    const keys = issue(`sts:${call.action}`);
    return { status: 200, headers: { 'content-type': 'text/xml' }, body: stsAnswer(call.action, keys, params.RoleArn ?? '') };
  });

  const imdsToken = randomBytes(16).toString('hex');
  const imds = await listen(async (req) => {
    const url = req.url ?? '';
    if (req.method === 'PUT' && url === '/latest/api/token') {
      if (!req.headers['x-aws-ec2-metadata-token-ttl-seconds']) return { status: 400, body: 'missing ttl' };
      return { status: 200, headers: { 'content-type': 'text/plain' }, body: imdsToken };
    }
    // IMDSv2 only: no token, no answer.
    if (req.headers['x-aws-ec2-metadata-token'] !== imdsToken) return { status: 401, body: '' };
    // The AWS SDK asks with the trailing slash, google-auth-library (WIF from AWS) without.
    if (url === '/latest/meta-data/iam/security-credentials/' || url === '/latest/meta-data/iam/security-credentials')
      return { status: 200, headers: { 'content-type': 'text/plain' }, body: ROLE_NAME };
    if (url === '/latest/meta-data/placement/availability-zone') return { status: 200, headers: { 'content-type': 'text/plain' }, body: `${REGION}a` };
    if (url === `/latest/meta-data/iam/security-credentials/${ROLE_NAME}`) {
      emulator.imdsCalls++;
      if (emulator.failing) return { status: 500, body: '' };
      const keys = issue('imds');
      return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ Code: 'Success', LastUpdated: new Date().toISOString(), Type: 'AWS-HMAC', ...awsJson(keys) }) };
    }
    return { status: 404, body: '' };
  });

  const containerToken = randomBytes(20).toString('hex');
  const container = await listen(async (req) => {
    if (req.url !== '/v1/credentials') return { status: 404, body: '' };
    if (req.headers.authorization !== containerToken) return { status: 401, body: JSON.stringify({ message: 'bad token' }) };
    emulator.containerCalls++;
    if (emulator.failing) return { status: 500, body: '' };
    return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(awsJson(issue('container'))) };
  });

  const ssoAccessToken = randomBytes(24).toString('base64url');
  const sso = await listen(async (req): Promise<Answer> => {
    const url = new URL(req.url ?? '/', 'http://sso');
    if (url.pathname !== '/federation/credentials') return { status: 404, body: '' };
    if (req.headers['x-amz-sso_bearer_token'] !== ssoAccessToken)
      return { status: 401, headers: { 'x-amzn-errortype': 'UnauthorizedException' }, body: JSON.stringify({ message: 'Session token not found or invalid' }) };
    if (!url.searchParams.get('role_name') || !url.searchParams.get('account_id')) return { status: 400, body: JSON.stringify({ message: 'missing role or account' }) };
    emulator.ssoCalls++;
    const keys = issue('sso');
    const roleCredentials = { accessKeyId: keys.accessKeyId, secretAccessKey: keys.secretAccessKey, sessionToken: keys.sessionToken, expiration: keys.expiresAt };
    return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ roleCredentials }) };
  });

  const refused: string[] = [];
  const bedrock = await startFakeUpstream(async (req) => {
    const authorization = String(req.headers.authorization ?? '');
    if (authorization.startsWith('Bearer ')) {
      if (authorization !== `Bearer ${apiKey}` || req.headers['x-amz-date']) return refuse(refused, 'bad API key');
    } else {
      const keys = validKeysOf(authorization);
      if (typeof keys === 'string') return refuse(refused, keys);
      if (!(await signatureMatches(req, req.raw, keys, 'bedrock'))) return refuse(refused, 'signature does not match');
      if (keys.sessionToken !== undefined && req.headers['x-amz-security-token'] !== keys.sessionToken) return refuse(refused, 'wrong session token');
    }
    return bedrockAnswer(req);
  });

  const emulator: AwsEmulator = {
    stsUrl: sts.url,
    imdsUrl: imds.url,
    ssoUrl: sso.url,
    ssoAccessToken,
    ssoCalls: 0,
    containerUrl: `${container.url}/v1/credentials`,
    containerToken,
    webIdentityToken: `eyJ${randomBytes(40).toString('base64url')}`,
    bedrock,
    lifetimeMs: options.lifetimeMs ?? 60 * 60_000,
    failing: false,
    stsCalls: [],
    imdsCalls: 0,
    containerCalls: 0,
    refused,
    issued,
    apiKey,
    async verifySignedRequest(signed, service = 'sts') {
      const headers = Object.fromEntries(Object.entries(signed.headers).map(([k, v]) => [k.toLowerCase(), v]));
      const keys = validKeysOf(headers.authorization ?? '');
      if (typeof keys === 'string') return keys;
      if (!(await signatureMatches({ method: signed.method, url: signed.url, headers }, '', keys, service))) return 'signature does not match';
      if (keys.sessionToken !== undefined && headers['x-amz-security-token'] !== keys.sessionToken) return 'wrong session token';
      return undefined;
    },
    staticKeys() {
      const keys: IssuedKeys = { accessKeyId: `AKIA${randomBytes(8).toString('hex').toUpperCase()}`, secretAccessKey: randomBytes(30).toString('base64'), issuer: 'static' };
      issued.set(keys.accessKeyId, keys);
      return keys;
    },
    async close() {
      await Promise.all([sts.close(), imds.close(), sso.close(), container.close(), bedrock.close()]);
    },
  };
  return emulator;
}

// ------------------------------------------------------------------ the fake Bedrock's answers

const codec = new EventStreamCodec(toUtf8, fromUtf8);
const frame = (eventType: string, payload: unknown): Buffer =>
  Buffer.from(
    codec.encode({
      headers: { ':message-type': { type: 'string', value: 'event' }, ':event-type': { type: 'string', value: eventType }, ':content-type': { type: 'string', value: 'application/json' } },
      body: fromUtf8(JSON.stringify(payload)),
    }),
  );
const eventStream = (frames: Buffer[]): ScriptedResponse => streamAnswer(frames, { headers: { 'content-type': 'application/vnd.amazon.eventstream' } });

/** The reply text names the API it came through, so a test sees which one served. */
function bedrockAnswer(req: RecordedRequest): ScriptedResponse {
  const op = /^\/model\/[^/]+\/([a-z-]+)$/.exec(req.url)?.[1];
  const usage = { input_tokens: 12, output_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 20 };
  switch (op) {
    case 'converse':
      return {
        status: 200,
        body: {
          output: { message: { role: 'assistant', content: [{ text: 'hello via converse' }] } },
          stopReason: 'end_turn',
          usage: { inputTokens: 12, outputTokens: 3, totalTokens: 15 },
          metrics: { latencyMs: 5 },
        },
      };
    case 'converse-stream':
      return eventStream([
        frame('messageStart', { role: 'assistant' }),
        frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'hello via converse-stream' } }),
        frame('contentBlockStop', { contentBlockIndex: 0 }),
        frame('messageStop', { stopReason: 'end_turn' }),
        frame('metadata', { usage: { inputTokens: 12, outputTokens: 3, totalTokens: 15 }, metrics: { latencyMs: 5 } }),
      ]);
    case 'invoke':
      return {
        status: 200,
        body: { id: 'msg_bdrk_01', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929', content: messagesContent(req.body), stop_reason: 'end_turn', stop_sequence: null, usage },
      };
    case 'invoke-with-response-stream':
      return invokeStreamAnswer({
        id: 'msg_bdrk_02',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5-20250929',
        content: messagesContent(req.body),
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage,
      });
    case 'count-tokens':
      return countTokensAnswer(req.body);
    default:
      return { status: 404, headers: { 'x-amzn-errortype': 'UnknownOperationException' }, body: { message: `no such operation: ${req.url}` } };
  }
}

/**
 * An Anthropic message as InvokeModelWithResponseStream sends it: the Messages stream events,
 * each the base64 `bytes` of a `chunk` frame (with the `p` padding Bedrock adds).
 */
export function invokeStreamAnswer(message: { content: Array<Record<string, unknown>>; stop_reason: string; usage: Record<string, number> } & Record<string, unknown>): ScriptedResponse {
  const chunk = (data: Record<string, unknown>) => frame('chunk', { bytes: Buffer.from(JSON.stringify(data)).toString('base64'), p: 'abcd' });
  const frames = [chunk({ type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } } })];
  message.content.forEach((block, index) => {
    const delta = (d: Record<string, unknown>) => frames.push(chunk({ type: 'content_block_delta', index, delta: d }));
    if (block.type === 'thinking') {
      frames.push(chunk({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
      delta({ type: 'thinking_delta', thinking: block.thinking });
      delta({ type: 'signature_delta', signature: block.signature });
    } else if (block.type === 'tool_use') {
      frames.push(chunk({ type: 'content_block_start', index, content_block: { ...block, input: {} } }));
      delta({ type: 'input_json_delta', partial_json: JSON.stringify(block.input) });
    } else {
      frames.push(chunk({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
      delta({ type: 'text_delta', text: block.text });
    }
    frames.push(chunk({ type: 'content_block_stop', index }));
  });
  frames.push(chunk({ type: 'message_delta', delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: message.usage.output_tokens ?? 1 } }));
  frames.push(chunk({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: message.usage.input_tokens ?? 1, outputTokenCount: message.usage.output_tokens ?? 1 } }));
  return eventStream(frames);
}

/**
 * CountTokens: exactly one of `input.converse` (Converse fields) or `input.invokeModel.body` (the
 * InvokeModel body, base64), answered `{inputTokens}`: here the length of the counted JSON over
 * four, so a test can tell what was counted. An InvokeModel body is checked as InvokeModel would
 * (a JSON object with `anthropic_version` and `max_tokens`, no `model`).
 */
// biome-ignore lint/suspicious/noExplicitAny: the request body as the fake received it
export function countTokensAnswer(body: any): ScriptedResponse {
  const invalid = (message: string): ScriptedResponse => ({ status: 400, headers: { 'x-amzn-errortype': 'ValidationException' }, body: { message } });
  const input = body?.input ?? {};
  if (Boolean(input.converse) === Boolean(input.invokeModel)) return invalid('input must hold exactly one of converse or invokeModel');
  let counted: string;
  if (input.invokeModel) {
    if (typeof input.invokeModel.body !== 'string') return invalid('invokeModel.body must be a blob');
    counted = Buffer.from(input.invokeModel.body, 'base64').toString('utf8');
    const parsed = JSON.parse(counted);
    if (!parsed.anthropic_version || typeof parsed.max_tokens !== 'number' || 'model' in parsed) return invalid('Malformed input request, please reformat your input and try again.');
  } else counted = JSON.stringify(input.converse);
  return { status: 200, body: { inputTokens: Math.ceil(counted.length / 4) } };
}

/** A thinking block (signed) when the request asked for thinking, then the text. */
// biome-ignore lint/suspicious/noExplicitAny: the request body as the fake received it
function messagesContent(body: any): Array<Record<string, string>> {
  const text = { type: 'text', text: 'hello via invoke' };
  return body?.thinking?.type === 'enabled' ? [{ type: 'thinking', thinking: 'Let me think.', signature: 'EqQBCkYIBxgCKkBsig' }, text] : [text];
}

function refuse(refused: string[], why: string): ScriptedResponse {
  refused.push(why);
  return { status: 403, headers: { 'x-amzn-errortype': 'UnrecognizedClientException' }, body: { message: 'The security token included in the request is invalid.' } };
}

// ------------------------------------------------------------------ STS, IMDS and container bodies

function awsJson(keys: IssuedKeys): Record<string, string> {
  return { AccessKeyId: keys.accessKeyId, SecretAccessKey: keys.secretAccessKey, Token: keys.sessionToken ?? '', Expiration: new Date(keys.expiresAt ?? 0).toISOString() };
}

function stsAnswer(action: string, keys: IssuedKeys, roleArn: string): string {
  const extra = action === 'AssumeRoleWithWebIdentity' ? '<SubjectFromWebIdentityToken>system:serviceaccount:ai:switchyard</SubjectFromWebIdentityToken>' : '';
  return `<${action}Response xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <${action}Result>${extra}
    <Credentials>
      <AccessKeyId>${keys.accessKeyId}</AccessKeyId>
      <SecretAccessKey>${keys.secretAccessKey}</SecretAccessKey>
      <SessionToken>${keys.sessionToken}</SessionToken>
      <Expiration>${new Date(keys.expiresAt ?? 0).toISOString()}</Expiration>
    </Credentials>
    <AssumedRoleUser><Arn>${roleArn.replace(':role/', ':assumed-role/')}/session</Arn><AssumedRoleId>AROAEXAMPLE:session</AssumedRoleId></AssumedRoleUser>
  </${action}Result>
  <ResponseMetadata><RequestId>${randomBytes(8).toString('hex')}</RequestId></ResponseMetadata>
</${action}Response>`;
}

function stsError(status: number, code: string, message: string): Answer {
  return {
    status,
    headers: { 'content-type': 'text/xml' },
    body: `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>0</RequestId></ErrorResponse>`,
  };
}

// ------------------------------------------------------------------ SigV4 and a small server

/** True when the request's signature is the one these keys make (re-signed with the SDK's signer at the date it carries). */
async function signatureMatches(req: Pick<IncomingMessage, 'method' | 'url' | 'headers'>, body: string, keys: IssuedKeys, service: string): Promise<boolean> {
  const auth = String(req.headers.authorization ?? '');
  const signedNames = /SignedHeaders=([^,]+)/.exec(auth)?.[1].split(';');
  const date = String(req.headers['x-amz-date'] ?? '');
  if (!signedNames || !/^\d{8}T\d{6}Z$/.test(date)) return false;
  const headers: Record<string, string> = {};
  for (const name of signedNames) if (!['x-amz-date', 'x-amz-security-token'].includes(name)) headers[name] = String(req.headers[name]);
  const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
  const query: Record<string, string> = Object.fromEntries(url.searchParams);
  const signingDate = new Date(`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`);
  const credentials = { accessKeyId: keys.accessKeyId, secretAccessKey: keys.secretAccessKey, ...(keys.sessionToken ? { sessionToken: keys.sessionToken } : {}) };
  // The AWS SDK signs x-amz-content-sha256 too; other signers (google-auth-library's) do not.
  const signer = new SignatureV4({ service, region: REGION, credentials, sha256: Hash.bind(null, 'sha256'), applyChecksum: signedNames.includes('x-amz-content-sha256') });
  const resigned = await signer.sign(
    { method: req.method ?? 'POST', protocol: url.protocol, hostname: url.hostname, port: Number(url.port), path: url.pathname, query, headers, body } as Parameters<SignatureV4['presign']>[0],
    { signingDate },
  );
  return resigned.headers.authorization === auth;
}

interface Answer {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

async function listen(handle: (req: IncomingMessage, body: string) => Promise<Answer>): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    try {
      const answer = await handle(req, Buffer.concat(parts).toString('utf8'));
      res.writeHead(answer.status, answer.headers ?? {}).end(answer.body);
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
