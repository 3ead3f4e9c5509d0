/** applyCapabilities: the core refuses (400) or drops what a provider declares it cannot honour. */
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../errors.ts';
import type { ChatCompletionRequest } from '../openai-types.ts';
import type { ProviderCall, ProviderCapabilities } from '../plugin-api.ts';
import { applyCapabilities } from './capabilities.ts';

const IMAGE_MESSAGE = {
  role: 'user',
  content: [
    { type: 'text', text: 'what is this?' },
    { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
  ],
};

/** A ProviderCall built by hand, the way the core hands it to the provider; `log.info` is a spy. */
function callOf(request: Record<string, unknown>, opts: { drop?: boolean } = {}) {
  const log = pino({ level: 'silent' });
  const info = vi.spyOn(log, 'info');
  // A cast rather than an annotation, so that a field added to the contract later does not break this test.
  const call = {
    provider: 'acme',
    request: { model: 'fast', messages: [{ role: 'user', content: 'hi' }], ...request } as ChatCompletionRequest,
    model: 'acme-large-2',
    stream: request.stream === true,
    signal: new AbortController().signal,
    requestId: 'req_cap',
    log,
    dropUnsupportedParams: opts.drop ?? false,
    timeouts: { connectMs: 1_000, firstByteMs: 1_000, idleMs: 1_000, totalMs: 1_000 },
    maxResponseBytes: 1_000_000,
  } as ProviderCall;
  return { call, info };
}

/** The error applyCapabilities throws for this request (fails the test when it does not throw). */
function refusal(request: Record<string, unknown>, caps: ProviderCapabilities): GatewayError {
  const { call } = callOf(request);
  try {
    applyCapabilities(call, caps);
  } catch (err) {
    expect(err).toBeInstanceOf(GatewayError);
    return err as GatewayError;
  }
  throw new Error('expected applyCapabilities to refuse the request');
}

describe('refusing (dropUnsupportedParams: false)', () => {
  it.each([
    ['unsupportedParams', { seed: 7 }, { unsupportedParams: ['seed'] }, 'seed', 'is not supported'],
    ['unsupportedParams (falsy but set)', { parallel_tool_calls: false }, { unsupportedParams: ['parallel_tool_calls'] }, 'parallel_tool_calls', 'is not supported'],
    ['streaming: false', { stream: true }, { streaming: false }, 'stream', 'set to true is not supported'],
    ['tools: false (tools)', { tools: [{ type: 'function', function: { name: 'f' } }] }, { tools: false }, 'tools', 'is not supported'],
    ['tools: false (tool_choice)', { tool_choice: 'required' }, { tools: false }, 'tool_choice', 'is not supported'],
    ['tools: false (named tool_choice)', { tool_choice: { type: 'function', function: { name: 'f' } } }, { tools: false }, 'tool_choice', 'is not supported'],
    ['responseFormat: false (json_object)', { response_format: { type: 'json_object' } }, { responseFormat: false }, 'response_format', 'of type "json_object" is not supported'],
    [
      'responseFormat: false (json_schema)',
      { response_format: { type: 'json_schema', json_schema: { name: 'x' } } },
      { responseFormat: false },
      'response_format',
      'of type "json_schema" is not supported',
    ],
    ['images: false', { messages: [{ role: 'system', content: 'be brief' }, IMAGE_MESSAGE] }, { images: false }, 'messages[1].content', '(an image part) is not supported'],
    ['samplingExtras: false (n)', { n: 2 }, { samplingExtras: false }, 'n', 'above 1 is not supported'],
    ['samplingExtras: false (logprobs)', { logprobs: true }, { samplingExtras: false }, 'logprobs', 'is not supported'],
    ['samplingExtras: false (top_logprobs)', { top_logprobs: 2 }, { samplingExtras: false }, 'top_logprobs', 'is not supported'],
    ['samplingExtras: false (presence_penalty)', { presence_penalty: 0.5 }, { samplingExtras: false }, 'presence_penalty', 'is not supported'],
    ['samplingExtras: false (frequency_penalty)', { frequency_penalty: -1 }, { samplingExtras: false }, 'frequency_penalty', 'is not supported'],
    ['samplingExtras: false (logit_bias)', { logit_bias: { '50256': -100 } }, { samplingExtras: false }, 'logit_bias', 'is not supported'],
    ['samplingExtras: false (modalities)', { modalities: ['text', 'audio'] }, { samplingExtras: false }, 'modalities', 'other than ["text"] are not supported'],
  ] as const)('%s: 400 unsupported_parameter naming %s', (_what, request, caps, param, why) => {
    const err = refusal(request, caps as ProviderCapabilities);
    expect(err.code).toBe('unsupported_parameter');
    expect(err.status).toBe(400);
    expect(err.type).toBe('invalid_request_error');
    expect(err.param).toBe(param);
    expect(err.message).toBe(`acme: the parameter '${param}' ${why} by model acme-large-2. Remove it, or set dropUnsupportedParams: true for this model in gateway.yaml.`);
  });

  it('the first unsupported parameter in the check order is the one named', () => {
    expect(refusal({ seed: 1, stream: true }, { unsupportedParams: ['seed'], streaming: false }).param).toBe('seed');
    expect(refusal({ stream: true, tools: [{ type: 'function', function: { name: 'f' } }] }, { streaming: false, tools: false }).param).toBe('stream');
  });
});

describe('what passes untouched', () => {
  it.each([
    ['unsupportedParams set to null or absent', { seed: null }, { unsupportedParams: ['seed', 'user'] }],
    ['stream: false when streaming is unsupported', { stream: false }, { streaming: false }],
    ['an empty tools list, tool_choice "none" or null', { tools: [], tool_choice: 'none' }, { tools: false }],
    ['tool_choice null', { tool_choice: null }, { tools: false }],
    ['response_format text', { response_format: { type: 'text' } }, { responseFormat: false }],
    ['text-only content parts', { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] }, { images: false }],
    ['sampling extras at their no-op values', { n: 1, logprobs: false, top_logprobs: 0, presence_penalty: 0, frequency_penalty: 0, logit_bias: {}, modalities: ['text'] }, { samplingExtras: false }],
    [
      'everything, when the provider declares nothing',
      { seed: 1, stream: true, n: 3, logprobs: true, tools: [{ type: 'function', function: { name: 'f' } }], response_format: { type: 'json_object' }, messages: [IMAGE_MESSAGE] },
      {},
    ],
    [
      'everything, when the provider declares it all supported',
      { stream: true, n: 3, tools: [{ type: 'function', function: { name: 'f' } }], messages: [IMAGE_MESSAGE] },
      { streaming: true, tools: true, images: true, responseFormat: true, samplingExtras: true, unsupportedParams: [] },
    ],
  ] as const)('%s: the very same request object, nothing logged', (_what, request, caps) => {
    const { call, info } = callOf(request);
    expect(applyCapabilities(call, caps as ProviderCapabilities)).toBe(call.request);
    expect(info).not.toHaveBeenCalled();
  });
});

describe('dropping (dropUnsupportedParams: true)', () => {
  it('returns a copy without the dropped parameters; the original request is untouched', () => {
    const request = { seed: 7, user: 'u1', temperature: 0.2, stream: true, response_format: { type: 'json_object' } };
    const { call } = callOf(request, { drop: true });
    const before = structuredClone(call.request);
    const out = applyCapabilities(call, { unsupportedParams: ['seed', 'user'], streaming: false, responseFormat: false });
    expect(out).not.toBe(call.request);
    expect(out).toEqual({ model: 'fast', messages: [{ role: 'user', content: 'hi' }], temperature: 0.2 });
    expect(call.request).toEqual(before);
  });

  it('logs each dropped parameter with the request id and provider', () => {
    const { call, info } = callOf({ seed: 7, stream: true }, { drop: true });
    applyCapabilities(call, { unsupportedParams: ['seed'], streaming: false });
    expect(info).toHaveBeenCalledTimes(2);
    expect(info).toHaveBeenNthCalledWith(1, { reqId: 'req_cap', provider: 'acme', param: 'seed' }, "dropped unsupported parameter 'seed'");
    expect(info).toHaveBeenNthCalledWith(2, { reqId: 'req_cap', provider: 'acme', param: 'stream' }, "dropped unsupported parameter 'stream'");
  });

  it('dropping tools also drops tool_choice (it would name a tool that is gone)', () => {
    const { call, info } = callOf({ tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: 'auto' }, { drop: true });
    const out = applyCapabilities(call, { tools: false });
    expect(out).toEqual({ model: 'fast', messages: [{ role: 'user', content: 'hi' }] });
    expect(info.mock.calls.map((c) => (c[0] as { param?: string }).param)).toEqual(['tools', 'tool_choice']);
  });

  it('dropping tools drops a tool_choice of "none" too', () => {
    const { call } = callOf({ tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: 'none' }, { drop: true });
    expect(applyCapabilities(call, { tools: false })).toEqual({ model: 'fast', messages: [{ role: 'user', content: 'hi' }] });
  });

  it('a tool_choice alone is dropped, the rest kept', () => {
    const { call } = callOf({ tool_choice: 'required', temperature: 1 }, { drop: true });
    expect(applyCapabilities(call, { tools: false })).toEqual({ model: 'fast', messages: [{ role: 'user', content: 'hi' }], temperature: 1 });
  });

  it('the copy is shallow: untouched fields are the same objects', () => {
    const { call } = callOf({ seed: 1, metadata: { team: 'a' } }, { drop: true });
    const out = applyCapabilities(call, { unsupportedParams: ['seed'] });
    expect(out.messages).toBe(call.request.messages);
    expect(out.metadata).toBe(call.request.metadata);
  });

  it('with nothing to drop it is still the very same object', () => {
    const { call, info } = callOf({ temperature: 0.5 }, { drop: true });
    expect(applyCapabilities(call, { unsupportedParams: ['seed'], streaming: false, tools: false, responseFormat: false, images: false, samplingExtras: false })).toBe(call.request);
    expect(info).not.toHaveBeenCalled();
  });

  // Bug: sampling extras are logged as dropped but stay in the request the provider sees
  // (checkSamplingExtras calls unsupportedParam directly, so applyCapabilities never lists them);
  // a provider that forwards the request would still send n: 3 upstream.
  it('sampling extras are removed from the request, as the log says', () => {
    const { call, info } = callOf({ n: 3, logprobs: true }, { drop: true });
    const out = applyCapabilities(call, { samplingExtras: false });
    expect(info.mock.calls.map((c) => (c[0] as { param?: string }).param)).toEqual(['n', 'logprobs']);
    expect(out).toEqual({ model: 'fast', messages: [{ role: 'user', content: 'hi' }] });
    expect(call.request.n).toBe(3);
  });

  // Bug: an image part is logged as dropped ('messages[0].content') but stays in the request.
  it('image parts are removed from the request, as the log says', () => {
    const { call, info } = callOf({ messages: [IMAGE_MESSAGE] }, { drop: true });
    const out = applyCapabilities(call, { images: false });
    expect(info).toHaveBeenCalledWith({ reqId: 'req_cap', provider: 'acme', param: 'messages[0].content' }, "dropped unsupported parameter 'messages[0].content'");
    expect(out.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'what is this?' }] }]);
    expect(call.request.messages[0].content).toHaveLength(2);
  });
});

describe('reasoning_effort for a model without reasoning', () => {
  it.each([
    ['reasoning: false', { reasoning: false }],
    ['unsupportedParams lists it (bedrock)', { unsupportedParams: ['seed', 'reasoning_effort'] }],
  ] as const)('%s: dropped and reported, not refused, even without dropUnsupportedParams', (_, caps) => {
    const { call } = callOf({ reasoning_effort: 'high', temperature: 0.2 });
    const drops: unknown[] = [];
    const out = applyCapabilities({ ...call, drop: (d) => drops.push(d) }, caps);
    expect(out).not.toHaveProperty('reasoning_effort');
    expect(out.temperature).toBe(0.2);
    expect(drops).toEqual([{ field: 'reasoning_effort', what: 'high', reason: 'acme model acme-large-2 has no reasoning effort to set' }]);
  });

  it('a strict request: the 400 the drop throws', () => {
    const { call } = callOf({ reasoning_effort: 'low' });
    const strict = new GatewayError('unsupported_parameter', 'strict', { param: 'reasoning_effort' });
    expect(() =>
      applyCapabilities(
        {
          ...call,
          drop: () => {
            throw strict;
          },
        },
        { reasoning: false },
      ),
    ).toThrow(strict);
  });

  it('a model that reasons keeps it', () => {
    const { call } = callOf({ reasoning_effort: 'low' });
    expect(applyCapabilities(call, {})).toBe(call.request);
  });
});
