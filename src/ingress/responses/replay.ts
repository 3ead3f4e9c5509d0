/**
 * A stored response as the event stream that would have produced it: what
 * `GET /v1/responses/{id}?stream=true` answers (OpenAI replays a response's events the same way).
 * The events are rebuilt from the final object, one delta per part; a stored response from a
 * native pass-through, with item types the translation does not write, replays each such item
 * as its added and done events.
 */

type Json = Record<string, unknown>;

/** One Responses stream event, numbered. */
export interface ReplayedEvent extends Json {
  type: string;
  sequence_number: number;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const FINAL: Record<string, string> = { completed: 'response.completed', incomplete: 'response.incomplete', failed: 'response.failed', cancelled: 'response.cancelled' };

export function replayEvents(response: Json): ReplayedEvent[] {
  const events: ReplayedEvent[] = [];
  const emit = (event: Json & { type: string }) => events.push({ ...event, sequence_number: events.length });
  const opening = { ...response, status: 'in_progress', output: [], usage: null, completed_at: null };
  emit({ type: 'response.created', response: opening });
  emit({ type: 'response.in_progress', response: opening });
  const output = Array.isArray(response.output) ? response.output.filter(isObject) : [];
  output.forEach((item, output_index) => {
    const item_id = item.id;
    emit({ type: 'response.output_item.added', output_index, item: openedItem(item) });
    if (item.type === 'function_call' && typeof item.arguments === 'string') {
      emit({ type: 'response.function_call_arguments.delta', item_id, output_index, delta: item.arguments });
      emit({ type: 'response.function_call_arguments.done', item_id, output_index, name: item.name, arguments: item.arguments });
    }
    const parts = item.type === 'message' || item.type === 'reasoning' ? (Array.isArray(item.content) ? item.content.filter(isObject) : []) : [];
    parts.forEach((part, content_index) => {
      const at = { item_id, output_index, content_index };
      const text = typeof part.text === 'string' ? part.text : typeof part.refusal === 'string' ? part.refusal : '';
      const kind = part.type === 'output_text' ? 'output_text' : part.type === 'refusal' ? 'refusal' : part.type === 'reasoning_text' ? 'reasoning_text' : undefined;
      emit({ type: 'response.content_part.added', ...at, part: kind === 'refusal' ? { ...part, refusal: '' } : { ...part, text: '', ...(kind === 'output_text' ? { logprobs: [] } : {}) } });
      if (kind) {
        emit({ type: `response.${kind}.delta`, ...at, delta: text, ...(kind === 'output_text' ? { logprobs: part.logprobs ?? [] } : {}) });
        emit({ type: `response.${kind}.done`, ...at, ...(kind === 'refusal' ? { refusal: text } : { text }), ...(kind === 'output_text' ? { logprobs: part.logprobs ?? [] } : {}) });
      }
      emit({ type: 'response.content_part.done', ...at, part });
    });
    emit({ type: 'response.output_item.done', output_index, item });
  });
  emit({ type: FINAL[String(response.status)] ?? 'response.completed', response });
  return events;
}

/** An item as its output_item.added event shows it: in progress, nothing said yet. */
function openedItem(item: Json): Json {
  if (item.type === 'message' || item.type === 'reasoning') return { ...item, status: 'in_progress', content: [] };
  if (item.type === 'function_call') return { ...item, status: 'in_progress', arguments: '' };
  return item;
}

export function replayedSse(event: ReplayedEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}
