/** What every plugin declares: the contract's version, its options' schema type, and the logger it gets. */
import type { Logger } from 'pino';

/**
 * The plugin contract's version. 2 changed the stage contract (a slimmer RequestContext;
 * `onResponse(ctx, outcome)`); the provider contract is unchanged, so providers declaring 1 still load.
 */
export const PLUGIN_API_VERSION = 2;
/** The versions a provider plugin may declare. */
export type ProviderApiVersion = 1 | typeof PLUGIN_API_VERSION;

export type { Logger };
export type JsonSchema = Record<string, unknown>;
