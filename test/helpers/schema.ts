/** Kept for the plugins' unit tests (plugins/<name>/*.test.ts), which import it by this path. */
export { expectValid } from 'switchyard-gateway/kit/testing';
