/**
 * One loopback upstream that plays the model for every provider family the gateway may call, each
 * in its own wire format (OpenAI chat and Responses under /v1, Anthropic Messages, Gemini
 * generateContent, Bedrock Converse and Claude's Messages body over InvokeModel, SigV4-checked):
 * what reaches it is what the gateway made of the client's request, so each request is recorded
 * with the wire it arrived in (a case's matrix cell says which one it was).
 */
import { fakeUpstream, type FakeUpstream, type RecordedRequest, type ScriptedResponse } from '../../../src/kit/testing/index.ts';
import { invokeStreamAnswer } from '../../helpers/aws-emulator.ts';
import { signedByAws } from '../../helpers/sigv4.ts';
import { CaseBook, type Decision, type TurnView } from './model.ts';
import { answerChat, readChat } from './wire-chat.ts';
import { answerConverse, readConverse } from './wire-converse.ts';
import { answerGemini, readGemini } from './wire-gemini.ts';
import { answerMessages, messageFor, readMessages } from './wire-messages.ts';
import { answerResponses, readResponses } from './wire-responses.ts';

export type Wire = 'chat' | 'responses' | 'messages' | 'gemini' | 'converse';
/** How a wire is framed: Messages also comes over Bedrock's InvokeModel (its own stream framing). */
type Format = Wire | 'invoke';

/** The AWS keys the bedrock providers sign with; a request not signed with them is refused, as Bedrock would. */
export const BEDROCK_KEYS = { accessKeyId: 'AKIDAGENTSMATRIX01', secretAccessKey: 'agents-matrix-bedrock-secret-0123456789' };

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

const FORMATS: Record<Format, WireFormat> = {
  chat: { read: readChat, answer: answerChat },
  responses: { read: readResponses, answer: answerResponses },
  messages: { read: readMessages, answer: answerMessages },
  gemini: { read: readGemini, answer: answerGemini },
  converse: { read: readConverse, answer: answerConverse },
  invoke: {
    read: readMessages,
    answer: (decision, model, stream, body) => {
      const message = messageFor(decision, model, body);
      return stream ? invokeStreamAnswer(message) : { status: 200, body: message };
    },
  },
};

const COUNTS: Record<string, unknown> = { messages: { input_tokens: 20 }, gemini: { totalTokens: 20 }, bedrock: { inputTokens: 20 } };

/** Which wire a request path speaks; the Gemini and Bedrock model names are in the path. */
function route(url: string): { wire: Wire; format?: Format; model?: string; stream?: boolean } | { count: keyof typeof COUNTS } | undefined {
  const path = url.split('?')[0]!;
  const bedrock = /^\/model\/([^/]+)\/(converse|converse-stream|invoke|invoke-with-response-stream|count-tokens)$/.exec(path);
  if (bedrock) {
    const [, model, op] = bedrock;
    if (op === 'count-tokens') return { count: 'bedrock' };
    const invoke = op!.startsWith('invoke');
    return { wire: invoke ? 'messages' : 'converse', format: invoke ? 'invoke' : 'converse', model: decodeURIComponent(model!), stream: op!.endsWith('stream') };
  }
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
  const upstream = fakeUpstream(async (req: RecordedRequest) => {
    const where = route(req.url);
    if (!where) return { status: 404, body: { error: { message: `scripted model: no route for ${req.method} ${req.url}`, type: 'not_found' } } };
    if (req.url.startsWith('/model/') && !(await signedByAws(req, BEDROCK_KEYS))) {
      return { status: 403, headers: { 'x-amzn-errortype': 'UnrecognizedClientException' }, body: { message: 'The security token included in the request is invalid.' } };
    }
    if ('count' in where) return { status: 200, body: COUNTS[where.count] };
    const format = FORMATS[where.format ?? where.wire];
    const view = format.read(req.body, req.raw);
    const decision = cases.decide(view);
    turns.push({ wire: where.wire, caseId: cases.find(req.raw)?.id, decision, tools: view.tools.map((t) => t.name), toolResults: view.toolResults });
    const stream = where.stream ?? req.body?.stream === true;
    return format.answer(decision, where.model ?? req.body?.model ?? 'scripted', stream, req.body);
  });
  return { upstream, cases, turns };
}
