/** Kept for tests that import it by this path. */
export { FakeClock, mulberry32 } from 'switchyard-gateway/kit/testing';
