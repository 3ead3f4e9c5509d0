/**
 * What a Responses stream has said so far: its items in output order (what `response.output`
 * will be) and its events, each with the next `sequence_number` (from 0), gathered until the
 * writer hands them out. An item in an event is a snapshot: later events never change what an
 * earlier one said.
 */
import { snapshot } from './snapshot.ts';
import type { OutputItem, ResponsesEvent } from './types.ts';

/** Distributes over the union, so an event literal is checked against its own variant. */
export type Unsequenced<E> = E extends unknown ? Omit<E, 'sequence_number'> : never;

export class StreamOutput {
  /** Every item opened so far, in output order. */
  readonly items: OutputItem[] = [];
  #sequence = 0;
  #events: ResponsesEvent[] = [];

  emit(event: Unsequenced<ResponsesEvent>): void {
    this.#events.push({ ...event, sequence_number: this.#sequence++ } as ResponsesEvent);
  }

  /** The events since the last call. */
  flush(): ResponsesEvent[] {
    const events = this.#events;
    this.#events = [];
    return events;
  }

  /** A new item: response.output_item.added. */
  add(item: OutputItem): void {
    this.items.push(item);
    this.emit({ type: 'response.output_item.added', output_index: this.items.length - 1, item: snapshot(item) });
  }

  /** response.output_item.done; `cutShort` (an incomplete response): the last item is the one cut short. */
  done(item: OutputItem, cutShort: boolean): void {
    const index = this.indexOf(item);
    item.status = cutShort && index === this.items.length - 1 ? 'incomplete' : 'completed';
    this.emit({ type: 'response.output_item.done', output_index: index, item: snapshot(item) });
  }

  indexOf(item: OutputItem): number {
    return this.items.indexOf(item);
  }
}
