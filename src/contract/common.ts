/** What every plugin declares: the contract's version, its options' schema type, and the logger it gets. */
import type { Logger } from 'pino';

export const PLUGIN_API_VERSION = 1;

export type { Logger };
export type JsonSchema = Record<string, unknown>;
