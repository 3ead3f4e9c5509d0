import { Registry } from 'prom-client';
import { expect, it } from 'vitest';
import { BufferedCounter } from './counter-buffer.ts';

it('hands what was added to the counter when collected, once', async () => {
  const registry = new Registry();
  const c = new BufferedCounter({ name: 'x_total', help: 'x', labelNames: ['k'], registers: [registry] });
  const a = Object.freeze({ k: 'a' });
  const b = Object.freeze({ k: 'b' });
  c.add(a, 1);
  c.add(a, 2);
  c.add(b, 0.5);
  expect(await registry.metrics()).toContain('x_total{k="a"} 3\nx_total{k="b"} 0.5');
  c.add(a, 1);
  const values = (await c.counter.get()).values.map((v) => [v.labels.k, v.value]);
  expect(values).toEqual([
    ['a', 4],
    ['b', 0.5],
  ]);
  // Collected again with nothing added: nothing counted twice.
  expect((await c.counter.get()).values.map((v) => v.value)).toEqual([4, 0.5]);
});
