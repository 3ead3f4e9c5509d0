/** What a provider suite sends through a test gateway, written once instead of per suite. */
import type OpenAI from 'openai';
import { DEV_KEY, type TestGateway } from './gateway.ts';
import { expectValid } from './schema.ts';

type Create = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
type CreateStream = OpenAI.Chat.ChatCompletionCreateParamsStreaming;
/** Request fields over the defaults; fields the SDK types do not know (a provider extension) are allowed. */
export type RequestFields<T> = Partial<T> & Record<string, unknown>;

export interface StreamedChat {
  chunks: OpenAI.Chat.ChatCompletionChunk[];
  /** The `content` deltas of the first choice, joined. */
  text: string;
  /** Every finish_reason, in order. */
  finishes: string[];
}

/**
 * Requests with one default alias and one user message, each overridable per call.
 *
 * @example
 * const { chat, streamed, post } = chatRequests(t, { model: 'acme' });
 * const { text, finishes } = await streamed({ stream_options: { include_usage: true } });
 */
export function chatRequests(t: TestGateway, defaults: { model: string; content?: string; apiKey?: string }) {
  const { model: alias, content = 'hi', apiKey = DEV_KEY } = defaults;
  const base = (model: string) => ({ model, messages: [{ role: 'user' as const, content }] });
  return {
    /** A completion through the SDK (`.withResponse()` works on it). */
    chat: (body: RequestFields<Create> = {}, model = alias) => t.client(apiKey).chat.completions.create({ ...base(model), ...body } as Create),

    /** A stream through the SDK, every chunk validated against the OpenAI schema. */
    async streamed(body: RequestFields<CreateStream> = {}, model = alias): Promise<StreamedChat> {
      const stream = await t.client(apiKey).chat.completions.create({ ...base(model), stream: true, ...body } as CreateStream);
      const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
      for await (const chunk of stream) {
        expectValid('CreateChatCompletionStreamResponse', chunk);
        chunks.push(chunk);
      }
      const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
      const finishes = chunks.flatMap((c) => c.choices.map((x) => x.finish_reason)).filter((f): f is NonNullable<typeof f> => Boolean(f));
      return { chunks, text, finishes };
    },

    /** A raw streaming request (no SDK), to see the exact status and SSE the client gets. */
    post: (body: Record<string, unknown> = {}, model = alias) =>
      fetch(`${t.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...base(model), stream: true, ...body }),
      }),
  };
}

/** The SSE events of a raw response, as text (`data: {...}`, `data: [DONE]`). */
export async function readSseEvents(res: Response): Promise<string[]> {
  return (await res.text()).split('\n\n').filter(Boolean);
}
