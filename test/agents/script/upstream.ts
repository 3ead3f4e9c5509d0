/**
 * One loopback upstream that plays the model for every provider family the gateway may call, each
 * in its own wire format (OpenAI chat and Responses under /v1, Anthropic Messages, Gemini
 * generateContent): what reaches it is what the gateway made of the client's request, so each
 * request is recorded with the wire it arrived in (a case's matrix cell says which one it was).
 */
import { fakeUpstream, type FakeUpstream, type RecordedRequest, type ScriptedResponse } from '../../../src/kit/testing/index.ts';
import { CaseBook, type Decision, type TurnView } from './model.ts';
import { answerChat, readChat } from './wire-chat.ts';
import { answerGemini, readGemini } from './wire-gemini.ts';
import { answerMessages, readMessages } from './wire-messages.ts';
import { answerResponses, readResponses } from './wire-responses.ts';

export type Wire = 'chat' | 'responses' | 'messages' | 'gemini';

export interface Turn {
  wire: Wire;
  caseId?: string;
  decision: Decision;
  /** Names of the tools offered, as the upstream received them. */
  tools: string[];
  toolResults: string[];
}

interface WireFormat {
  read(body: unknown, raw: string): TurnView;
  answer(decision: Decision, model: string, stream: boolean, body: unknown): ScriptedResponse;
}

const FORMATS: Record<Wire, WireFormat> = {
  chat: { read: readChat, answer: answerChat },
  responses: { read: readResponses, answer: answerResponses },
  messages: { read: readMessages, answer: answerMessages },
  gemini: { read: readGemini, answer: answerGemini },
};

/** Which wire a request path speaks; the Gemini model name is in the path. */
function route(url: string): { wire: Wire; model?: string; stream?: boolean } | { count: Wire } | undefined {
  const path = url.split('?')[0]!;
  if (path.endsWith('/chat/completions')) return { wire: 'chat' };
  if (path.endsWith('/responses')) return { wire: 'responses' };
  if (path.endsWith('/messages/count_tokens')) return { count: 'messages' };
  if (path.endsWith('/messages')) return { wire: 'messages' };
  const gemini = /\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/.exec(path);
  if (gemini?.[2] === 'countTokens') return { count: 'gemini' };
  if (gemini) return { wire: 'gemini', model: decodeURIComponent(gemini[1]!), stream: gemini[2] === 'streamGenerateContent' };
  return undefined;
}

export interface ScriptedModel {
  upstream: FakeUpstream;
  cases: CaseBook;
  /** Every model turn answered, in order. */
  turns: Turn[];
}

/** The scripted upstream: register cases on `cases`, start it (useTestGateway does), point providers at `upstream.url`. */
export function scriptedModel(): ScriptedModel {
  const cases = new CaseBook();
  const turns: Turn[] = [];
  const upstream = fakeUpstream((req: RecordedRequest) => {
    const where = route(req.url);
    if (!where) return { status: 404, body: { error: { message: `scripted model: no route for ${req.method} ${req.url}`, type: 'not_found' } } };
    if ('count' in where) return { status: 200, body: where.count === 'messages' ? { input_tokens: 20 } : { totalTokens: 20 } };
    const format = FORMATS[where.wire];
    const view = format.read(req.body, req.raw);
    const decision = cases.decide(view);
    turns.push({ wire: where.wire, caseId: cases.find(req.raw)?.id, decision, tools: view.tools.map((t) => t.name), toolResults: view.toolResults });
    const stream = where.stream ?? req.body?.stream === true;
    return format.answer(decision, where.model ?? req.body?.model ?? 'scripted', stream, req.body);
  });
  return { upstream, cases, turns };
}
