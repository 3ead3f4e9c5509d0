/**
 * The Gemini API's answer side (GenerateContentResponse, candidates, parts, usage) is the gemini
 * provider's, in src/translate/gemini/native.ts: the same types, written here in the other
 * direction. Requests arrive as untyped JSON and are read field by field (fields.ts), each
 * mistake a 400 naming the field.
 */
export type { GeminiCandidate, GeminiContent, GeminiPart, GeminiResponse, GeminiUsage } from '../../translate/gemini/native.ts';
