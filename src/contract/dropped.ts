/** A request field the gateway read but did not carry to the target: reported, or refused when strict. */
export interface Drop {
  /** Where in the request, as the client wrote it: `client_metadata`, `tools[8]`, `messages[2].content[0]`. */
  readonly field: string;
  /** What it was, in a few words, for the header and the log: `web_search`, `context_management`. */
  readonly what?: string;
  /** Why it was not carried (strict mode's 400 says it). */
  readonly reason: string;
}
