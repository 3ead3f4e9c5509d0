/**
 * Every way in, one line each. A new protocol is a folder under src/ingress/ with a `protocol.ts`
 * implementing Protocol (src/ingress/protocol.ts), plus its line here: the server registers its
 * paths, and keys, limits, routing, retries, metrics and the log line come with the pipeline.
 */
import { chatProtocol } from './chat/protocol.ts';
import { embeddingsProtocol } from './embeddings/protocol.ts';
import { geminiBatchEmbedProtocol, geminiCountTokensProtocol, geminiEmbedProtocol, geminiGenerateProtocol, geminiStreamProtocol } from './gemini/protocol.ts';
import { countTokensProtocol, messagesProtocol } from './messages/protocol.ts';
import type { Protocol } from './protocol.ts';
import { responsesProtocol } from './responses/protocol.ts';

export const PROTOCOLS: readonly Protocol[] = [
  chatProtocol,
  responsesProtocol,
  messagesProtocol,
  countTokensProtocol,
  embeddingsProtocol,
  ...[geminiGenerateProtocol, geminiStreamProtocol, geminiCountTokensProtocol, geminiEmbedProtocol, geminiBatchEmbedProtocol],
];
