/**
 * The Gemini generation a model id belongs to (`gemini-2.5-flash` → 2, `gemini-3-pro-preview` → 3),
 * for the few behaviours that differ by generation (thinking levels, thought signatures).
 * Undefined for ids that do not say (`gemini-flash-latest`, tuned models).
 */
export function generationOf(model: string): number | undefined {
  const m = /(?:^|\/)gemini-(\d+)(?:[.-]|$)/.exec(model);
  return m ? Number(m[1]) : undefined;
}
