/**
 * The benchmark's fake OpenAI upstream: the mock provider's deterministic answers served over
 * HTTP on 127.0.0.1 (plain and SSE). Prints its port on stdout.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mockChunks, mockCompletion } from '../plugins/mock/generate.ts';
import type { ChatCompletionRequest } from '../src/openai-types.ts';

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (d: Buffer) => parts.push(d));
  req.on('end', () => {
    const request = JSON.parse(Buffer.concat(parts).toString('utf8')) as ChatCompletionRequest;
    if (request.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let out = '';
      for (const chunk of mockChunks(request, 'mock-upstream-1')) out += `data: ${JSON.stringify(chunk)}\n\n`;
      res.end(`${out}data: [DONE]\n\n`);
      return;
    }
    const body = JSON.stringify(mockCompletion(request, 'mock-upstream-1'));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
