/**
 * POST /v1/messages/count_tokens for targets that cannot count themselves
 * (https://docs.anthropic.com/en/api/messages-count-tokens): `{ input_tokens }` estimated from the
 * translated chat request. The body is a Messages body without `max_tokens` (count_tokens takes
 * none); it is checked, and native-only parts refused, exactly as /v1/messages would.
 *
 * A realistic estimate, not the bound governance reserves against (governance/estimate.ts counts a
 * token per byte so that it can never be exceeded): English text runs about four characters a
 * token in the BPE vocabularies of OpenAI, Anthropic and Llama alike, so
 *
 *   text (message content, tool calls, tool definitions, a response schema)   ceil(chars / 4)
 *   each message                 + 4 (role and separators; OpenAI's cookbook counts 3)
 *   the reply's priming          + 3
 *   an image                     width × height / 750, as Anthropic's vision guide counts it, after
 *                                scaling down (aspect kept) to at most 1,568 pixels on the long edge
 *                                and 1,568 tokens, its limits on most models; the size is read from
 *                                the file's header (image-size.ts); an image by URL, or one whose
 *                                size cannot be read, counts the most: 1,568
 *   a PDF                        2,000 a page: Anthropic's PDF guide gives 1,500 to 3,000 a page (the
 *                                text plus the page as an image); pages are counted in the file
 *
 * The count is the target's, not Claude's: no Anthropic tool-use or thinking system prompt (a few
 * hundred tokens on Claude) is added for a model that does not have one.
 */
import type { ChatCompletionRequest, ChatMessage, ContentPart } from '../../openai-types.ts';
import { isObject } from './fields.ts';
import { type ImageSize, imageSizeOfDataUrl } from './image-size.ts';
import { messagesToChat } from './request.ts';

const CHARS_PER_TOKEN = 4;
const MESSAGE_FRAMING = 4;
const REPLY_PRIMING = 3;
/** Anthropic's limits for an image on most models: the long edge in pixels, and tokens. */
const IMAGE_MAX_EDGE = 1_568;
const IMAGE_MAX_TOKENS = 1_568;
const PIXELS_PER_TOKEN = 750;
const PDF_PAGE_TOKENS = 2_000;

export function countTokens(body: unknown): { input_tokens: number } {
  // count_tokens has no max_tokens; any value lets the shared checks run.
  const chat = messagesToChat(isObject(body) && body.max_tokens === undefined ? { ...body, max_tokens: 1 } : body);
  return { input_tokens: estimateInputTokens(chat) };
}

export function estimateInputTokens(chat: ChatCompletionRequest): number {
  let tokens = REPLY_PRIMING;
  for (const message of chat.messages) tokens += messageTokens(message);
  if (chat.tools?.length) tokens += textTokens(JSON.stringify(chat.tools));
  if (chat.response_format) tokens += textTokens(JSON.stringify(chat.response_format));
  return tokens;
}

const textTokens = (text: string): number => Math.ceil(text.length / CHARS_PER_TOKEN);

function messageTokens(message: ChatMessage): number {
  let tokens = MESSAGE_FRAMING;
  if (typeof message.content === 'string') tokens += textTokens(message.content);
  else if (Array.isArray(message.content)) for (const part of message.content) tokens += partTokens(part);
  for (const call of message.tool_calls ?? []) tokens += textTokens(call.function.name) + textTokens(call.function.arguments);
  return tokens;
}

function partTokens(part: ContentPart): number {
  switch (part.type) {
    case 'text':
      return textTokens(part.text);
    case 'image_url':
      return imageTokens(imageSizeOfDataUrl(part.image_url.url));
    case 'file':
      return PDF_PAGE_TOKENS * pdfPages(part.file.file_data);
    default:
      return textTokens(JSON.stringify(part));
  }
}

export function imageTokens(size: ImageSize | undefined): number {
  if (!size) return IMAGE_MAX_TOKENS;
  const pixels = size.width * size.height;
  const scale = Math.min(1, IMAGE_MAX_EDGE / Math.max(size.width, size.height), Math.sqrt((IMAGE_MAX_TOKENS * PIXELS_PER_TOKEN) / pixels));
  return Math.min(IMAGE_MAX_TOKENS, Math.ceil((pixels * scale * scale) / PIXELS_PER_TOKEN));
}

/** Page objects in a base64 PDF data URL (`/Type /Page`, not `/Pages`); at least one. */
export function pdfPages(dataUrl: unknown): number {
  if (typeof dataUrl !== 'string') return 1;
  const base64 = dataUrl.slice(dataUrl.indexOf(',') + 1);
  const pdf = Buffer.from(base64, 'base64').toString('latin1');
  const pages = pdf.match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;
  return Math.max(1, pages);
}
