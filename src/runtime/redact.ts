/** Scrubs configured secrets (provider keys, gateway keys) from text bound for a client or a log. */
export function makeRedactor(secrets: Iterable<string>): (text: string) => string {
  const list = [...new Set([...secrets].filter((s) => s.length >= 6))].sort((a, b) => b.length - a.length);
  if (list.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const s of list) if (out.includes(s)) out = out.replaceAll(s, '[REDACTED]');
    return out;
  };
}
