/**
 * bench/reload.ts's closed-loop client, on a thread of its own so its CPU is not the gateway's:
 * `connections` requests back to back until told to stop, then each request's start and end
 * (absolute ms: performance.timeOrigin + now, comparable across threads).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Pool } from 'undici';

const { url, token, connections } = workerData as { url: string; token: string; connections: number };
const pool = new Pool(url, { connections });
const now = () => performance.timeOrigin + performance.now();
const requests: [start: number, end: number, status: number][] = [];
let running = true;
parentPort?.once('message', () => (running = false));

async function loop(): Promise<void> {
  while (running) {
    const start = now();
    const res = await pool.request({
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await res.body.text();
    requests.push([start, now(), res.statusCode]);
  }
}

await Promise.all(Array.from({ length: connections }, loop));
await pool.close();
parentPort?.postMessage(requests);
