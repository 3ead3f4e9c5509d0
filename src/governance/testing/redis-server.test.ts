import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { startRedisServer } from './redis-server.ts';

describe('startRedisServer', () => {
  const path = process.env.PATH;
  afterEach(() => {
    process.env.PATH = path;
  });

  it('fails, saying what to install, when redis-server is not on PATH', async () => {
    process.env.PATH = '/nonexistent';
    await expect(startRedisServer()).rejects.toThrow(/redis-server is not on PATH.*Install it/);
  });

  it('starts, stops and restarts a server on the same port', async () => {
    const server = await startRedisServer();
    await server.stop();
    await server.start();
    await server.stop('SIGTERM');
    expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
  });

  it('never takes a neighbour’s server on a port it lost for its own: it starts on another', async () => {
    const neighbour = await startRedisServer();
    const server = await startRedisServer(neighbour.port);
    expect(server.port).not.toBe(neighbour.port);
    const [a, b] = [new Redis(neighbour.url), new Redis(server.url)];
    await a.set('owner', 'neighbour');
    expect(await b.get('owner')).toBeNull();
    a.disconnect();
    b.disconnect();
    await Promise.all([server.stop(), neighbour.stop()]);
  });
});
