import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The shared folder beside the checkout (fixtures and the OpenAI schema bundle). */
export const SHARED = process.env.SWITCHYARD_SHARED ?? path.resolve(ROOT, '../shared');
export const FIXTURES = path.join(SHARED, 'fixtures');
