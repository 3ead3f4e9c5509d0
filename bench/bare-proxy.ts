/**
 * The floor for any Node hop: a bare HTTP server that forwards each request to the upstream
 * through an undici pool and pipes the answer back, with no parsing, auth or logging.
 * Usage: bare-proxy.ts <upstream-url>. Prints its port on stdout.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { Pool } from 'undici';

const pool = new Pool(process.argv[2], { connections: 256, keepAliveTimeout: 30_000 });

const server = createServer(async (req, res) => {
  try {
    const upstream = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: req });
    res.writeHead(upstream.statusCode, { 'content-type': String(upstream.headers['content-type'] ?? 'application/json') });
    await pipeline(upstream.body, res);
  } catch {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  }
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
