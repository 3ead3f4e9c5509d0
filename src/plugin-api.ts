/**
 * The contract between the core and its plugins: every type a provider plugin or a pipeline
 * stage touches, and the define* helpers, kept in src/contract/ (one module per concern). A
 * leaf: it imports only the wire types and the error catalogue; the core's implementations import
 * it, never the reverse. Plugin authors import it through the package entry (`switchyard-gateway`);
 * the loader checks `apiVersion`.
 */
export * from './contract/common.ts';
export * from './contract/policies.ts';
export * from './contract/failures.ts';
export * from './contract/dropped.ts';
export * from './contract/identity.ts';
export * from './contract/providers.ts';
export * from './contract/routing.ts';
export * from './contract/pipeline.ts';
