import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { staleAgentClients } from '../../scripts/test-services.mjs';

describe("npm test's check of the pinned agent CLIs", () => {
  it('lists each package that is missing or not at its pin, and nothing once all are', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-agents-pins-'));
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ dependencies: { '@scope/cli': '1.2.3', other: '4.5.6', gone: '1.0.0' } }));
    for (const [name, version] of [
      ['@scope/cli', '1.2.3'],
      ['other', '4.5.5'],
    ]) {
      mkdirSync(path.join(dir, 'node_modules', name!), { recursive: true });
      writeFileSync(path.join(dir, 'node_modules', name!, 'package.json'), JSON.stringify({ name, version }));
    }
    const url = pathToFileURL(`${dir}/`);
    expect(staleAgentClients(url)).toEqual(['other', 'gone']);
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ dependencies: { '@scope/cli': '1.2.3' } }));
    expect(staleAgentClients(url)).toEqual([]);
  });

  it("finds this repository's CLIs at their pins (npm test installs them first)", () => {
    expect(staleAgentClients()).toEqual([]);
  });
});
