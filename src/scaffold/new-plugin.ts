/** `switchyard plugin new provider|stage NAME [--dir DIR]`: a plugin folder with a passing test. */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { providerTemplate, stageTemplate } from './templates.ts';

export function scaffoldPlugin(kind: string, name: string, dir = path.join('plugins', name)): string[] {
  if (kind !== 'provider' && kind !== 'stage') throw new Error(`plugin kind must be "provider" or "stage" (got "${kind}")`);
  if (!/^[a-z][a-z0-9-]*$/.test(name)) throw new Error(`plugin name must be lowercase letters, digits and dashes, starting with a letter (got "${name}")`);
  const target = path.resolve(dir);
  if (existsSync(target)) throw new Error(`${dir} already exists; pick another name or --dir`);
  const files = (kind === 'provider' ? providerTemplate : stageTemplate)(name);
  mkdirSync(target, { recursive: true });
  return Object.entries(files).map(([file, text]) => {
    const full = path.join(target, file);
    writeFileSync(full, text);
    return full;
  });
}
