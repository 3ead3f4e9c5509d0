import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_PRICES, extendPrices, findPrice, loadPriceFile, priceOf } from './prices.ts';

describe('prices', () => {
  it('gives every entry a source and a date, and sane rates', () => {
    for (const [plugin, models] of Object.entries(BUILT_IN_PRICES)) {
      for (const [model, p] of Object.entries(models)) {
        expect(p.source, `${plugin}/${model}`).toMatch(/\S/);
        expect(p.date, `${plugin}/${model}`).toMatch(/^\d{4}-\d{2}$/);
        // Only the offline mock is free.
        if (plugin === 'mock') expect(p.input).toBe(0);
        else expect(p.input).toBeGreaterThan(0);
        expect(p.output).toBeGreaterThanOrEqual(0);
        if (p.cachedInput !== undefined) expect(p.cachedInput).toBeLessThanOrEqual(p.input);
      }
    }
  });

  it('prices every model of the offline mock at zero', () => {
    expect(findPrice(BUILT_IN_PRICES, 'mock', 'mock-1')).toMatchObject({ input: 0, output: 0 });
    expect(findPrice(BUILT_IN_PRICES, 'openai', 'no-such-model')).toBeUndefined();
  });

  it('matches dated and versioned ids to their model, and nothing else', () => {
    expect(findPrice(BUILT_IN_PRICES, 'openai', 'gpt-4o-2024-08-06')?.input).toBe(2.5);
    expect(findPrice(BUILT_IN_PRICES, 'openai', 'gpt-4o-2024-05-13')?.input).toBe(5);
    expect(findPrice(BUILT_IN_PRICES, 'openai', 'gpt-4o-mini-2024-07-18')?.input).toBe(0.15);
    expect(findPrice(BUILT_IN_PRICES, 'openai', 'gpt-4o-audio-preview')).toBeUndefined();
    expect(findPrice(BUILT_IN_PRICES, 'anthropic', 'claude-opus-4-1-20250805')?.output).toBe(75);
    expect(findPrice(BUILT_IN_PRICES, 'anthropic', 'claude-3-7-sonnet-latest')?.input).toBe(3);
    expect(findPrice(BUILT_IN_PRICES, 'bedrock', 'us.anthropic.claude-sonnet-4-20250514-v1:0')?.input).toBe(3);
    expect(findPrice(BUILT_IN_PRICES, 'bedrock', 'amazon.nova-pro-v1:0')?.output).toBe(3.2);
    expect(findPrice(BUILT_IN_PRICES, 'bedrock', 'amazon.titan-embed-text-v2:0')?.input).toBe(0.02);
    expect(findPrice(BUILT_IN_PRICES, 'gemini', 'gemini-2.0-flash-001')?.input).toBe(0.1);
    expect(findPrice(BUILT_IN_PRICES, 'azure-openai', 'gpt-4o')).toBeUndefined();
  });

  it("lets the target's price win, and an operator file extend or correct the table", async () => {
    expect(priceOf(BUILT_IN_PRICES, { plugin: 'openai', model: 'gpt-4o', price: { input: 1, output: 2 } })).toEqual({ input: 1, output: 2 });
    expect(priceOf(BUILT_IN_PRICES, { plugin: 'openai', model: 'my-finetune' })).toBeNull();
    const dir = mkdtempSync(join(tmpdir(), 'prices-'));
    try {
      const file = join(dir, 'prices.json');
      writeFileSync(file, JSON.stringify({ providers: { openai: { 'my-finetune': { input: 3, output: 12, source: 'contract', date: '2026-01' } } } }));
      const table = extendPrices(BUILT_IN_PRICES, await loadPriceFile(file));
      expect(priceOf(table, { plugin: 'openai', model: 'my-finetune' })?.input).toBe(3);
      expect(priceOf(table, { plugin: 'openai', model: 'gpt-4o' })?.input).toBe(2.5);
      writeFileSync(file, JSON.stringify({ providers: { openai: { bad: { input: -1, output: 1, source: 's', date: 'd' } } } }));
      await expect(loadPriceFile(file)).rejects.toThrow('providers.openai.bad: input and output must be numbers >= 0');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
