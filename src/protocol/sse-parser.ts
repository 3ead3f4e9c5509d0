/**
 * The text/event-stream grammar over decoded text, chunk by chunk: WHATWG HTML "Parsing an event
 * stream" (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation).
 * One object per stream and no closures: the events go to a sink given with each chunk. It gives
 * what eventsource-parser 4 (its former engine here) gave: the id is the event's own (not carried
 * to the next one), an empty `event:` is no type, and a leading BOM is stripped in its decoded
 * (U+FEFF) and its raw-bytes-as-text ("\xEF\xBB\xBF") forms; sse-parser.test.ts compares the two.
 */

/** Receives the events a parser completes. */
export interface SseSink {
  sseEvent(data: string, event: string | undefined, id: string | undefined): void;
}

const LF = 10;
const SPACE = 32;
const COLON = 58;
/** A UTF-8 BOM read as Latin-1: three characters, which may come one chunk at a time. */
const RAW_BOM = '\xEF\xBB\xBF';

export class SseParser {
  /** The start of a line whose end has not arrived yet. */
  #rest = '';
  /** The stream's first characters, held while they could still be a BOM; undefined once checked. */
  #head: string | undefined = '';
  /** The last chunk ended with CR: a LF starting the next one belongs to that CR (a CRLF split in two). */
  #skipLf = false;
  #data = '';
  #dataLines = 0;
  #event: string | undefined;
  #id: string | undefined;

  /** Parses `text`, the next characters of the stream; returns how many events it completed. */
  feed(text: string, sink: SseSink): number {
    if (this.#head !== undefined) {
      text = this.#stripBom(text);
      if (text === '') return 0;
    }
    let start = 0;
    if (this.#skipLf && text.length > 0) {
      this.#skipLf = false;
      if (text.charCodeAt(0) === LF) start = 1;
    }
    let lf = text.indexOf('\n', start);
    let cr = text.indexOf('\r', start);
    if (lf === -1 && cr === -1) {
      // No line end: keep the piece (a rope, not a copy: a huge line in small chunks stays linear).
      if (start < text.length) this.#rest += start === 0 ? text : text.slice(start);
      return 0;
    }
    if (this.#rest !== '') {
      const joined = this.#rest + (start === 0 ? text : text.slice(start));
      const shift = this.#rest.length - start;
      if (lf !== -1) lf += shift;
      if (cr !== -1) cr += shift;
      text = joined;
      start = 0;
      this.#rest = '';
    }
    let events = 0;
    for (;;) {
      let end: number;
      if (lf !== -1 && (cr === -1 || lf < cr)) end = lf;
      else if (cr !== -1) end = cr;
      else break;
      if (this.#line(text, start, end, sink)) events++;
      start = end + 1;
      if (end === cr) {
        if (start === text.length) this.#skipLf = true;
        else if (text.charCodeAt(start) === LF) start++;
        if (cr !== -1) cr = text.indexOf('\r', start);
      }
      if (lf !== -1 && lf < start) lf = text.indexOf('\n', start);
    }
    if (start < text.length) this.#rest = text.slice(start);
    return events;
  }

  #stripBom(text: string): string {
    const head = this.#head + text;
    if (head === '' || head === '\xEF' || head === '\xEF\xBB') {
      this.#head = head;
      return '';
    }
    this.#head = undefined;
    if (head.charCodeAt(0) === 0xfeff) return head.slice(1);
    return head.startsWith(RAW_BOM) ? head.slice(RAW_BOM.length) : head;
  }

  /** One line, text[start, end); true when it dispatched an event. */
  #line(text: string, start: number, end: number, sink: SseSink): boolean {
    if (start === end) return this.#dispatch(sink);
    if (text.charCodeAt(start) === COLON) return false; // a comment
    let colon = text.indexOf(':', start);
    if (colon === -1 || colon > end) colon = end;
    let valueStart = colon < end ? colon + 1 : end;
    if (valueStart < end && text.charCodeAt(valueStart) === SPACE) valueStart++;
    const nameLength = colon - start;
    if (nameLength === 4 && text.startsWith('data', start)) {
      const value = text.slice(valueStart, end);
      this.#data = this.#dataLines === 0 ? value : `${this.#data}\n${value}`;
      this.#dataLines++;
    } else if (nameLength === 5 && text.startsWith('event', start)) {
      this.#event = valueStart < end ? text.slice(valueStart, end) : undefined;
    } else if (nameLength === 2 && text.startsWith('id', start)) {
      const value = text.slice(valueStart, end);
      if (!value.includes('\0')) this.#id = value;
    }
    // `retry` (reconnection is not ours to do) and unknown fields are ignored.
    return false;
  }

  #dispatch(sink: SseSink): boolean {
    const dispatched = this.#dataLines > 0;
    if (dispatched) sink.sseEvent(this.#data, this.#event, this.#id);
    this.#data = '';
    this.#dataLines = 0;
    this.#event = undefined;
    this.#id = undefined;
    return dispatched;
  }
}
