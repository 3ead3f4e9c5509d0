/**
 * What the cluster primary and its workers tell each other over the IPC channel, besides the
 * state backend's calls (governance/ipc-protocol.ts). JSON, so plain data only; `sy` tells them
 * apart from the cluster's own traffic and anything a plugin might send.
 */
import type { StartupBanner } from '../startup-banner.ts';

/** What the primary watches for the workers: the config file, `${file:...}` files, plugin files and plugin folders. */
export interface WatchList {
  files: string[];
  folders: string[];
  /** Fingerprints of the config and `${file:...}` files as the worker read them (src/config/fingerprint.ts). */
  known: Record<string, string>;
}

export type ToWorker =
  /** Reload from the file now (it changed, SIGHUP); answered with `reloaded`. */
  | { sy: 'reload'; trigger: string }
  /** Finish in-flight requests within shutdownGraceMs, then exit. */
  | { sy: 'shutdown' }
  /** The answer to `scrape`: every worker's metrics summed, or why not. */
  | { sy: 'scraped'; id: number; text?: string; error?: string };

export type ToPrimary =
  /** Listening. The banner is logged once, by the primary, when every worker is ready. */
  | { sy: 'ready'; banner: StartupBanner; watch: WatchList }
  /** A reload's outcome; what to watch may have changed (a plugin or a secret file added, even by a rejected edit). */
  | { sy: 'reloaded'; ok: boolean; generation: number; watch: WatchList }
  /** This worker was scraped: it needs every worker's metrics. */
  | { sy: 'scrape'; id: number };

const syOf = (m: unknown): unknown => (typeof m === 'object' && m !== null ? (m as { sy?: unknown }).sy : undefined);

export function isToWorker(m: unknown): m is ToWorker {
  const sy = syOf(m);
  return sy === 'reload' || sy === 'shutdown' || sy === 'scraped';
}

export function isToPrimary(m: unknown): m is ToPrimary {
  const sy = syOf(m);
  return sy === 'ready' || sy === 'reloaded' || sy === 'scrape';
}
