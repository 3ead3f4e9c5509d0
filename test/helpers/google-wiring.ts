/**
 * Pointing google-auth-library at the Google emulator (google-emulator.ts) for a test file: the
 * documented variables, and oauth2.googleapis.com routed to loopback.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { GoogleEmulator } from './google-emulator.ts';

/**
 * Sends the https connections Node's global agent makes to oauth2.googleapis.com to the
 * emulator (plain HTTP on loopback) instead; every other host is refused, so nothing leaves the
 * machine. Returns the function that puts the original agent back.
 */
export function routeGoogleOAuth(emulator: GoogleEmulator): () => void {
  const original = https.globalAgent;
  class LoopbackAgent extends https.Agent {
    override createConnection(options: { host?: string | null }): net.Socket {
      const [hostname, port] = emulator.host.split(':');
      if (options.host !== 'oauth2.googleapis.com') {
        const socket = new net.Socket();
        process.nextTick(() => socket.destroy(new Error(`test: no connection to ${options.host} (only oauth2.googleapis.com is routed, to the emulator)`)));
        return socket;
      }
      return net.connect(Number(port), hostname);
    }
  }
  https.globalAgent = new LoopbackAgent({ keepAlive: false });
  return () => {
    https.globalAgent = original;
  };
}

/**
 * For a test file: starts the emulator and, while the file runs, points google-auth-library at
 * it the documented ways (GCE_METADATA_HOST; no GOOGLE_APPLICATION_CREDENTIALS; an empty gcloud
 * config folder, so no developer's ADC file is found) and routes oauth2.googleapis.com to it. The
 * library reads these when it fetches, not only at startup, so they hold until the file ends.
 * Returns the path of an OIDC token file (for external_account credentials) written at start.
 */
export function useGoogleEmulator(emulator: GoogleEmulator): { oidcFile: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'switchyard-google-'));
  const oidcFile = path.join(dir, 'oidc-token');
  const saved: Record<string, string | undefined> = {};
  let unroute: () => void = () => {};
  beforeAll(async () => {
    await emulator.start();
    mkdirSync(path.join(dir, 'gcloud'));
    writeFileSync(oidcFile, emulator.oidcToken());
    const env = {
      GCE_METADATA_HOST: emulator.host,
      CLOUDSDK_CONFIG: path.join(dir, 'gcloud'),
      GOOGLE_APPLICATION_CREDENTIALS: undefined,
      METADATA_SERVER_DETECTION: undefined,
      GOOGLE_CLOUD_QUOTA_PROJECT: undefined,
    };
    for (const [k, v] of Object.entries(env)) {
      saved[k] = process.env[k];
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    unroute = routeGoogleOAuth(emulator);
  });
  afterAll(async () => {
    unroute();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await emulator.close();
  });
  return { oidcFile };
}
