import type { UsageTotal } from '@stepfold/engine';
import type { ModelMessage } from 'ai';

// What the model step reads and returns, and the pure step before it (prepare): the transcript so
// far, the tool results of the previous response, the user messages that arrived since. A step of
// its own because a step's output is cleared when the loop enters it again: the model step cannot
// read its own last output, the prepare step (entered after it completed) can.

/** A user message, sent as the agent's `message` signal. `id` makes a resend (or a retried request) count once. */
export interface AgentMessage {
  id: string;
  text: string;
}

/** A tool call the model proposed, one item of the `tools` map (the input of its child workflow). */
export interface ToolCallItem {
  /** The agent instance that proposed it: the tool step streams its result to the agent's stream. */
  agent: string;
  toolCallId: string;
  toolName: string;
  input: unknown;
  /** Whether the call waits for a decision (its tool's approval policy said so). */
  approval: boolean;
}

/** A decision on a tool call that waits for approval: run it, run it with other arguments, or not at all. */
export type ToolApproval =
  | { decision: 'approve' }
  | { decision: 'edit'; input: unknown }
  | { decision: 'reject'; message?: string | undefined };

/** How a tool call ended: the output of its child workflow (`null` in the map's results when it failed for good). */
export type ToolOutcome =
  | { toolCallId: string; toolName: string; status: 'ok'; output: unknown; editedInput?: unknown }
  | { toolCallId: string; toolName: string; status: 'rejected'; message?: string | undefined };

/** Token counts of a model call. */
export interface TurnUsage {
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
  totalTokens?: number | undefined;
}

/**
 * The model step's output. `status`: `tools` (its tool calls run next) or `answered` (a reply with
 * no tool calls: the turn is over).
 */
export interface ModelTurn {
  status: 'tools' | 'answered';
  /** Model steps in this run so far (the step's iteration): the loop continues as new after `turnsPerRun`. */
  turn: number;
  text: string;
  toolCalls: ToolCallItem[];
  usage: TurnUsage;
  /**
   * The conversation's tokens so far, this call's included: every completed model call of every
   * run (a continue-as-new carries it). Kept in the snapshot when the rest is offloaded; read it
   * with the engine's `tokenUsage(snapshot)`.
   */
  usageTotal: UsageTotal;
  /** The model that answered (its provider's model id). */
  modelId?: string | undefined;
  /** Every message so far, this response's included: what the next call sends. */
  transcript: ModelMessage[];
  /** Ids of the latest user messages taken in, so one read twice is not taken again. */
  seen: string[];
}

/** The agent's input: a first message or two, or (after continue-as-new) the last turn of the run before. */
export interface AgentInput {
  messages?: AgentMessage[] | undefined;
  last?: ModelTurn | undefined;
  resumed?: number | undefined;
}

/** What the prepare step's input mapping gives it (see `agentWorkflows`). */
export interface PrepareStepInput {
  start?: AgentInput | null | undefined;
  last?: ModelTurn | null | undefined;
  results?: Array<ToolOutcome | null> | null | undefined;
  listened?: AgentMessage[] | null | undefined;
  messages?: AgentMessage[] | null | undefined;
}

/** The prepare step's output, the model step's input: what the next model call sends, and whether one is due. */
export interface PreparedCall {
  transcript: ModelMessage[];
  seen: string[];
  /** Tool results or user messages were added: a model call is due (otherwise the agent listens again). */
  fresh: boolean;
  /** The call begins a turn (user messages, not tool results, brought it about). */
  opensTurn: boolean;
  /** The conversation's tokens before this call (what the model step adds its call's usage to). */
  usageTotal: UsageTotal;
}

/** How many user message ids a turn remembers: more than one batch of messages can hold. */
const SEEN_KEPT = 200;

/**
 * The prepare step: the transcript for the next model call, from the prior one, the results of its
 * tool calls and the new user messages. Pure: a retry computes the same from the same snapshot.
 */
export function prepareCall(input: PrepareStepInput): PreparedCall {
  const prior = input.last ?? input.start?.last ?? undefined;
  const transcript: ModelMessage[] = [...(prior?.transcript ?? [])];
  const seen = [...(prior?.seen ?? [])];
  let fresh = false;
  // Only a response of this run can have tool calls waiting: a run continues as new after an answer.
  if (input.last?.status === 'tools' && input.last.toolCalls.length) {
    transcript.push(toolMessage(input.last.toolCalls, input.results ?? []));
    fresh = true;
  }
  let opensTurn = false;
  const incoming = [...(input.start?.messages ?? []), ...(input.listened ?? []), ...(input.messages ?? [])];
  for (const m of incoming) {
    if (typeof m?.id !== 'string' || seen.includes(m.id)) continue;
    seen.push(m.id);
    transcript.push({ role: 'user', content: m.text });
    fresh = true;
    opensTurn ||= input.last?.status !== 'tools';
  }
  return { transcript, seen: seen.slice(-SEEN_KEPT), fresh, opensTurn, usageTotal: totalOf(prior) };
}

/** The running total a turn carries (zero before the first call; a turn from before totals were kept counts from zero). */
function totalOf(prior: ModelTurn | undefined): UsageTotal {
  const t = prior?.usageTotal;
  return t ? { ...t } : { inputTokens: 0, outputTokens: 0, totalTokens: 0, modelCalls: 0 };
}

/** `total` with one call's `usage` added (a count the provider did not report adds 0). */
export function addUsage(total: UsageTotal, usage: TurnUsage): UsageTotal {
  const n = (v: number | undefined) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  const input = n(usage.inputTokens);
  const output = n(usage.outputTokens);
  return {
    inputTokens: total.inputTokens + input,
    outputTokens: total.outputTokens + output,
    totalTokens:
      total.totalTokens + (usage.totalTokens === undefined ? input + output : n(usage.totalTokens)),
    modelCalls: total.modelCalls + 1,
  };
}

/** The tool message answering `calls`, from the map's results in the same order (`null`: the call failed). */
export function toolMessage(
  calls: readonly ToolCallItem[],
  results: ReadonlyArray<ToolOutcome | null>,
): ModelMessage {
  return {
    role: 'tool',
    content: calls.map((call, i) => {
      const r = results[i] ?? null;
      const base = { type: 'tool-result' as const, toolCallId: call.toolCallId, toolName: call.toolName };
      if (r === null)
        return { ...base, output: { type: 'error-text' as const, value: 'the tool call failed' } };
      if (r.status === 'rejected')
        return {
          ...base,
          output: {
            type: 'error-text' as const,
            value: `the user rejected this tool call${r.message ? `: ${r.message}` : ''}`,
          },
        };
      const value =
        (r.editedInput === undefined ? r.output : { editedInput: r.editedInput, output: r.output }) ?? null;
      return { ...base, output: { type: 'json' as const, value: value as never } };
    }),
  };
}
