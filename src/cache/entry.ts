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
  get(key: string): Promise<CacheEntry | undefined>;
  set(key: string, entry: CacheEntry, ttlMs: number): Promise<void>;
  close?(): Promise<void>;
}
