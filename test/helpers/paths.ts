/** Kept for the plugins' unit tests (plugins/<name>/*.test.ts), which import it by this path; new code imports ./repo.ts. */
export { ROOT, FIXTURES } from './repo.ts';
