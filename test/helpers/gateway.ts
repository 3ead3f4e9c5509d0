/** Kept for tests that import it by this path: the kit's test gateway, and the repository's configYaml. */
export { DEV_KEY, failureOf, logLineFor, startTestGateway, type TestGateway } from 'switchyard-gateway/kit/testing';
export { configYaml } from './repo.ts';
