/**
 * The stack's floor: the least a fastify + undici server can do for the gateway's JSON work, so
 * that the gateway's cost splits into what the stack costs and what the gateway adds. It checks
 * the bearer key, parses the body (fastify's parser), maps the model, writes the upstream body,
 * sends it through an undici pool, parses the answer and serialises it back; a stream is read
 * event by event, each event parsed and written again as it comes (never held whole). No log
 * line, metrics, routing or limits.
 * Plain JavaScript, as the hop is (bench/bare-proxy.mjs says why).
 * Usage: node bench/floor.mjs <upstream-url> <port>
 */
import Fastify from 'fastify';
import { Pool } from 'undici';

const KEY = 'Bearer sk-bench-0123456789';
const pool = new Pool(process.argv[2], { keepAliveTimeout: 30_000 });
const app = Fastify({ logger: false, keepAliveTimeout: 75_000 });

app.post('/v1/chat/completions', async (request, reply) => {
  if (request.headers.authorization !== KEY) return reply.code(401).send({ error: { message: 'invalid key', type: 'invalid_request_error' } });
  const body = /** @type {{ model: string, stream?: boolean }} */ (request.body);
  // The alias `bench` maps to the target model `bench`, as in the gateway's config.
  const upstream = await pool.request({
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, model: body.model }),
  });
  if (!body.stream) return reply.code(upstream.statusCode).send(await upstream.body.json());
  reply.hijack();
  const res = reply.raw;
  res.writeHead(upstream.statusCode, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let pending = '';
  for await (const chunk of upstream.body) {
    pending += chunk.toString('utf8');
    let cut = pending.indexOf('\n\n');
    while (cut !== -1) {
      const data = pending.slice(pending.indexOf('data: ') + 6, cut);
      pending = pending.slice(cut + 2);
      res.write(data === '[DONE]' ? 'data: [DONE]\n\n' : `data: ${JSON.stringify(JSON.parse(data))}\n\n`);
      cut = pending.indexOf('\n\n');
    }
  }
  res.end();
});

await app.listen({ port: Number(process.argv[3]), host: '127.0.0.1' });
// Exit (rather than die of the signal) so that a --cpu-prof profile or callgrind's dump is written.
process.once('SIGTERM', () => process.exit(0));
