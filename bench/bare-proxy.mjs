/**
 * The floor for any Node hop: a bare HTTP server that forwards each request to the upstream
 * through an undici pool and pipes the answer back, with no parsing, auth or logging. The pool
 * has undici's default size (no cap on connections), so the hop is never the one that queues.
 * Plain JavaScript, as the gateway's compiled dist/ is: Node's type stripping for a .ts file keeps
 * its transformer in memory (about 17 MB of RSS), which the hop's memory figures must not carry.
 * Usage: node bench/bare-proxy.mjs <upstream-url> <port>
 */
import { createServer } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Pool } from 'undici';

const pool = new Pool(process.argv[2], { keepAliveTimeout: 30_000 });

const server = createServer(async (req, res) => {
  try {
    /** @type {Record<string, string>} */
    const headers = { 'content-type': 'application/json' };
    if (req.headers['content-length']) headers['content-length'] = req.headers['content-length'];
    const upstream = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers, body: req });
    res.writeHead(upstream.statusCode, { 'content-type': String(upstream.headers['content-type'] ?? 'application/json') });
    await pipeline(upstream.body, res);
  } catch {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  }
});
server.keepAliveTimeout = 75_000;
server.listen(Number(process.argv[3]), '127.0.0.1');
// Exit (rather than die of the signal) so that a --cpu-prof profile is written.
process.once('SIGTERM', () => process.exit(0));
