import { describe, expect, it } from 'vitest';
import { loadFixture } from 'switchyard-gateway/kit/testing';
import { GatewayError } from '../../errors.ts';
import { countTokens, estimateInputTokens, imageTokens, pdfPages } from './count-tokens.ts';

const ANTHROPIC = new URL('../../../test/fixtures/anthropic/', import.meta.url);

/** A recorded request as a count_tokens body (no max_tokens, no stream) and what Claude counted for it. */
function recorded(name: string): { body: Record<string, unknown>; claude: number } {
  const fixture = loadFixture(ANTHROPIC, name);
  const { max_tokens: _max, stream: _stream, ...body } = fixture.request;
  const u = fixture.json.usage;
  return { body, claude: u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens };
}

describe('countTokens', () => {
  it.each(['messages-system-prompt', 'messages-image-input-base64', 'messages-usage-cache-read'])('%s: within a factor of 1.5 of what Claude counted', (name) => {
    const { body, claude } = recorded(name);
    const { input_tokens } = countTokens(body);
    expect(input_tokens).toBeGreaterThan(claude / 1.5);
    expect(input_tokens).toBeLessThan(claude * 1.5);
  });

  it('text: a token per four characters, four per message, three to prime the reply', () => {
    expect(countTokens({ model: 'm', messages: [{ role: 'user', content: 'x'.repeat(40) }] })).toEqual({ input_tokens: 10 + 4 + 3 });
    expect(countTokens({ model: 'm', system: 'abcd', messages: [{ role: 'user', content: 'abcde' }] })).toEqual({ input_tokens: 1 + 4 + 2 + 4 + 3 });
  });

  it('tools, tool calls and a response schema count as their JSON', () => {
    const bare = countTokens({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }).input_tokens;
    const tools = countTokens({ model: 'm', messages: [{ role: 'user', content: 'hi' }], tools: [{ name: 'f', input_schema: { type: 'object' } }] }).input_tokens;
    expect(tools - bare).toBe(Math.ceil(JSON.stringify([{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }]).length / 4));
  });

  it('checks the body as /v1/messages does (max_tokens aside), native-only parts included', () => {
    expect(() => countTokens({ messages: [] })).toThrow(GatewayError);
    expect(() => countTokens({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'file_1' } }] }] })).toThrow(
      expect.objectContaining({ code: 'unsupported_parameter', param: 'messages[0].content[0].source' }),
    );
    expect(() => countTokens('nope')).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });
});

describe('estimateInputTokens: media', () => {
  it('an image: width × height / 750, scaled to 1,568 px on the long edge and 1,568 tokens; unknown → 1,568', () => {
    expect(imageTokens({ width: 540, height: 360 })).toBe(260);
    expect(imageTokens({ width: 1000, height: 1000 })).toBe(1334);
    expect(imageTokens({ width: 4000, height: 3000 })).toBe(1568);
    expect(imageTokens({ width: 3136, height: 200 })).toBe(Math.ceil((1568 * 100) / 750));
    expect(imageTokens(undefined)).toBe(1568);
    const url = estimateInputTokens({ model: 'm', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }] });
    expect(url).toBe(1568 + 4 + 3);
  });

  it('a PDF: 2,000 a page, pages counted in the file', () => {
    const pdf = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Pages /Count 2 >>\n2 0 obj << /Type /Page >>\n3 0 obj << /Type/Page >>\n%%EOF').toString('base64');
    expect(pdfPages(`data:application/pdf;base64,${pdf}`)).toBe(2);
    expect(pdfPages('data:application/pdf;base64,')).toBe(1);
    const tokens = countTokens({ model: 'm', messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf } }] }] }).input_tokens;
    expect(tokens).toBe(4000 + 4 + 3);
  });
});
