import { describe, expect, it } from 'vitest';
import { DROPPED_HEADER_MAX, droppedHeader, joinDrops, refusalOf } from './drops.ts';

describe('droppedHeader', () => {
  it('names each field, with what it was when known, in order', () => {
    expect(
      droppedHeader([
        { field: 'client_metadata', reason: 'r' },
        { field: 'tools[8]', what: 'web_search', reason: 'r' },
      ]),
    ).toBe('client_metadata, tools[8] (web_search)');
  });

  it('stays within its bound and says how many more were left out', () => {
    const drops = Array.from({ length: 200 }, (_, i) => ({ field: `unknown_field_${i}`, reason: 'r' }));
    const header = droppedHeader(drops);
    expect(header.length).toBeLessThanOrEqual(DROPPED_HEADER_MAX);
    const shown = header.split(', ').filter((s) => s.startsWith('unknown_field_')).length;
    expect(header).toMatch(new RegExp(`, \\.\\.\\.\\+${200 - shown} more$`));
    expect(shown).toBeGreaterThan(10);
  });

  it('a single field too long for the header is counted, not cut', () => {
    expect(droppedHeader([{ field: 'x'.repeat(DROPPED_HEADER_MAX + 1), reason: 'r' }])).toBe('...+1 more');
  });

  it('keeps a header value ASCII whatever the client named its field', () => {
    expect(droppedHeader([{ field: 'caf\u00e9\n\u2026', reason: 'r' }])).toBe('caf???');
  });
});

describe('joinDrops', () => {
  const a = [{ field: 'a', reason: 'r' }];
  const b = [{ field: 'b', reason: 'r' }];
  it('is undefined when nothing was dropped, and no copy when one side is empty', () => {
    expect(joinDrops(undefined, [])).toBeUndefined();
    expect(joinDrops(a, undefined)).toBe(a);
    expect(joinDrops([], b)).toBe(b);
    expect(joinDrops(a, b)).toEqual([...a, ...b]);
  });
});

describe('refusalOf', () => {
  it('is the 400 naming the field, what it was and why', () => {
    const err = refusalOf({ field: 'tools[2]', what: 'web_search_20250305', reason: 'only Anthropic runs server tools' });
    expect(err).toMatchObject({ code: 'unsupported_parameter', status: 400, param: 'tools[2]' });
    expect(err.message).toContain("'tools[2]' (web_search_20250305)");
    expect(err.message).toContain('only Anthropic runs server tools');
    expect(err.message).toContain('strict');
  });
});
