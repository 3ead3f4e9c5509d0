/**
 * A TCP proxy on loopback that can add latency: every chunk, in either direction, is passed on
 * `delayMs` after it arrived (order kept), so a server behind it answers late without being
 * paused. Plays a slow network or an overloaded Redis for the fault battery.
 */
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';

export interface LatencyProxy {
  readonly port: number;
  /** The delay added to each chunk from now on (0: none). */
  setDelay(ms: number): void;
  close(): Promise<void>;
}

export async function startLatencyProxy(targetPort: number): Promise<LatencyProxy> {
  let delayMs = 0;
  const sockets = new Set<Socket>();
  /** Passes `from`'s bytes to `to`, each chunk held `delayMs` (read when it arrives). */
  const pipeLate = (from: Socket, to: Socket) => {
    let last = Promise.resolve();
    from.on('data', (chunk) => {
      const due = Date.now() + delayMs;
      last = last.then(async () => {
        const wait = due - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        if (!to.destroyed) to.write(chunk);
      });
    });
    from.on('close', () => void last.then(() => to.destroy()));
  };
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    pipeLate(client, upstream);
    pipeLate(upstream, client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    setDelay: (ms) => void (delayMs = ms),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
