/**
 * The gateway's chat extensions in a Responses answer: web_search_calls and annotations as
 * web_search_call items and url_citation annotations, and signed thinking blocks as a reasoning
 * item's encrypted_content, streamed and not. Every event is checked against OpenAI's schema and
 * the stream's bookkeeping, and the SDK reads the stream back.
 */
import { describe, expect, it } from 'vitest';
import { expectValid } from 'switchyard-gateway/kit/testing';
import type { ChatCompletion, ChatCompletionChunk } from '../../openai-types.ts';
import { responseIds } from './ids.ts';
import { decodeReasoning } from './reasoning.ts';
import { chatRequestOf, readResponsesRequest } from './request.ts';
import { chatToResponse } from './response.ts';
import { ResponsesStreamWriter } from './stream.ts';
import { checkResponsesStream, sdkReadsStream } from './testing.ts';
import type { MessageItem, ReasoningItem, WebSearchCallItem } from './types.ts';

const ids = () => responseIds('req_h1', 1_700_000_000, () => 1_700_000_042);
const request = (body: Record<string, unknown> = {}) => readResponsesRequest({ model: 'm', input: 'x', ...body });
const chunk = (delta: Record<string, unknown>, finish: 'stop' | null = null): ChatCompletionChunk => ({
  id: 'chatcmpl-x',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'upstream-1',
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
});
const search = { id: 'srvtoolu_1', query: 'q', sources: [{ url: 'https://a.example', title: 'A' }], status: 'completed' as const };
const cite = (start: number, end: number) => ({ type: 'url_citation' as const, url_citation: { start_index: start, end_index: end, url: 'https://a.example', title: 'A' } });

async function stream(chunks: ChatCompletionChunk[], body: Record<string, unknown> = {}) {
  const writer = new ResponsesStreamWriter(request({ ...body, stream: true }), ids());
  const events = [...writer.start(), ...chunks.flatMap((c) => writer.push(c)), ...writer.end()];
  for (const e of events) expectValid('ResponseStreamEvent', e);
  const final = checkResponsesStream(events);
  const sdk = await sdkReadsStream(events);
  expect(sdk.emitted.map((e) => e.type)).toEqual(events.map((e) => e.type));
  return { events, final };
}

describe('web search in a Responses answer', () => {
  it('streamed: text, a search, cited text: the search closes the first message; citations count from the part they land in', async () => {
    const { events, final } = await stream(
      [chunk({ role: 'assistant', content: 'Let me look. ' }), chunk({ web_search_calls: [search] }), chunk({ content: 'It is A.' }), chunk({ annotations: [cite(19, 21)] }), chunk({}, 'stop')],
      { include: ['web_search_call.action.sources'] },
    );
    expect(final.output.map((o) => o.type)).toEqual(['message', 'web_search_call', 'message']);
    expect(final.output[1]).toEqual({
      type: 'web_search_call',
      id: 'ws_req_h1_1',
      status: 'completed',
      action: { type: 'search', query: 'q', queries: ['q'], sources: [{ type: 'url', url: 'https://a.example' }] },
    });
    const second = (final.output[2] as MessageItem).content[0];
    expect(second).toMatchObject({ text: 'It is A.', annotations: [{ type: 'url_citation', start_index: 6, end_index: 8, url: 'https://a.example', title: 'A' }] });
    expect(events.filter((e) => e.type.startsWith('response.web_search_call.')).map((e) => e.type)).toEqual([
      'response.web_search_call.in_progress',
      'response.web_search_call.searching',
      'response.web_search_call.completed',
    ]);
  });

  it('plain: the searches ahead of the message, sources only when include asks', () => {
    const completion: ChatCompletion = {
      id: 'c',
      object: 'chat.completion',
      created: 1,
      model: 'u',
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'It is A.', web_search_calls: [search], annotations: [cite(6, 7)] } }],
    };
    const response = chatToResponse(completion, request(), ids());
    expectValid('Response', response);
    expect(response.output.map((o) => o.type)).toEqual(['web_search_call', 'message']);
    expect((response.output[0] as WebSearchCallItem).action).toEqual({ type: 'search', query: 'q', queries: ['q'] });
    expect((response.output[1] as MessageItem).content[0]).toMatchObject({ annotations: [{ start_index: 6, end_index: 7 }] });
  });
});

describe('signed reasoning as encrypted_content', () => {
  const include = ['reasoning.encrypted_content'];

  it('streamed: a signature after the reasoning closed (Gemini signs its text) makes a reasoning item of its own at the end', async () => {
    const { final } = await stream(
      [
        chunk({ role: 'assistant', reasoning_content: 'Hmm.' }),
        chunk({ content: 'Hi' }),
        chunk({ thinking_blocks: [{ type: 'thinking', thinking: '', signature: 'gemini:text:SIG' }] }),
        chunk({}, 'stop'),
      ],
      { include },
    );
    expect(final.output.map((o) => o.type)).toEqual(['reasoning', 'message', 'reasoning']);
    const [first, , last] = final.output as ReasoningItem[];
    expect(first.encrypted_content).toBeUndefined();
    expect(decodeReasoning(last.encrypted_content)).toEqual({ blocks: [{ type: 'thinking', thinking: 'Hmm.', signature: 'gemini:text:SIG' }] });
  });

  it('streamed: Anthropic thinking signed before the text: one reasoning item with its text and its encrypted_content', async () => {
    const { final } = await stream(
      [
        chunk({ role: 'assistant', reasoning_content: 'Let me ' }),
        chunk({ reasoning_content: 'see.' }),
        chunk({ thinking_blocks: [{ type: 'thinking', thinking: '', signature: 'SIG' }] }),
        chunk({ thinking_blocks: [{ type: 'redacted_thinking', data: 'RED' }] }),
        chunk({ content: 'Yes.' }),
        chunk({}, 'stop'),
      ],
      { include },
    );
    expect(final.output.map((o) => o.type)).toEqual(['reasoning', 'message']);
    const item = final.output[0] as ReasoningItem;
    expect(item.content).toEqual([{ type: 'reasoning_text', text: 'Let me see.' }]);
    expect(decodeReasoning(item.encrypted_content)).toEqual({
      blocks: [
        { type: 'thinking', thinking: 'Let me see.', signature: 'SIG' },
        { type: 'redacted_thinking', data: 'RED' },
      ],
    });
  });

  it('sent back: an empty or null encrypted_content is none (not reported); a foreign one is reported; ours signs the next assistant turn', () => {
    const item = (encrypted_content: unknown) => ({ type: 'reasoning', id: 'rs_1', summary: [], encrypted_content });
    const input = (reasoning: unknown) => [{ role: 'user', content: 'hi' }, reasoning, { role: 'assistant', content: 'Yes.' }, { role: 'user', content: 'ok' }];
    expect(request({ input: input(item('')) }).untranslatable).toEqual([]);
    expect(request({ input: input(item(null)) }).untranslatable).toEqual([]);
    expect(request({ input: input(item('gAAAA')) }).untranslatable.map((d) => d.field)).toEqual(['input[1].encrypted_content']);
    const ours = chatToResponse(
      {
        id: 'c',
        object: 'chat.completion',
        created: 1,
        model: 'u',
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Yes.', thinking_blocks: [{ type: 'thinking', thinking: 't', signature: 'S' }] } }],
      },
      request({ include }),
      ids(),
    ).output[0] as ReasoningItem;
    const chat = chatRequestOf(request({ input: input(item(ours.encrypted_content)) }));
    expect(chat.messages[1]).toEqual({ role: 'assistant', content: 'Yes.', thinking_blocks: [{ type: 'thinking', thinking: 't', signature: 'S' }] });
  });

  it('plain: a reasoning item for redacted thinking alone (no text), only when include asks', () => {
    const completion: ChatCompletion = {
      id: 'c',
      object: 'chat.completion',
      created: 1,
      model: 'u',
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Yes.', thinking_blocks: [{ type: 'redacted_thinking', data: 'RED' }] } }],
    };
    expect(chatToResponse(completion, request(), ids()).output.map((o) => o.type)).toEqual(['message']);
    const response = chatToResponse(completion, request({ include }), ids());
    expectValid('Response', response);
    const item = response.output[0] as ReasoningItem;
    expect(item.content).toEqual([]);
    expect(decodeReasoning(item.encrypted_content)).toEqual({ blocks: [{ type: 'redacted_thinking', data: 'RED' }] });
  });
});
