/** What the exact cache keeps of an answer: the answer itself (a completion, or a stream's chunks in order) and who answered at what cost. */
import type { ChatCompletion, ChatCompletionChunk } from '../openai-types.ts';

export type CachedAnswer = { kind: 'completion'; body: ChatCompletion } | { kind: 'stream'; chunks: ChatCompletionChunk[] };

export interface CacheEntry {
  answer: CachedAnswer;
  /** The provider (gateway.yaml name) and upstream model that answered. */
  provider: string;
  model: string;
  /** What the answer cost when it was made (USD; null when unpriced): what a hit saves. */
  costUsd: number | null;
  storedAt: number;
}

/** Where entries live: a process's memory, or Redis shared by a fleet. */
export interface CacheStore {
  /** The entry, parsed afresh on each call: its answer is the caller's to change. */
  get(key: string): Promise<CacheEntry | undefined>;
  /** Keeps `json`, an entry as entryJson writes it. */
  set(key: string, json: string, ttlMs: number): Promise<void>;
  close?(): Promise<void>;
}

/**
 * A CacheEntry's JSON around an answer already serialised (answerJson): a miss serialises the
 * answer once, as it passes, and never copies it as objects.
 */
export function entryJson(answerJson: string, meta: Omit<CacheEntry, 'answer'>): string {
  return `{"answer":${answerJson},${JSON.stringify(meta).slice(1)}`;
}

/** A completion as CachedAnswer JSON. */
export function completionJson(body: ChatCompletion): string {
  return `{"kind":"completion","body":${JSON.stringify(body)}}`;
}

/** A stream's chunks, each serialised as it passed, as CachedAnswer JSON. */
export function streamJson(chunks: readonly string[]): string {
  return `{"kind":"stream","chunks":[${chunks.join(',')}]}`;
}
