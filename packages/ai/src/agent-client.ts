import { type CallOptions, type Runner, type Snapshot, StepfoldError } from '@stepfold/engine';
import { APPROVAL_SIGNAL, MESSAGE_SIGNAL, MODEL_STEP, TOOLS_STEP } from './agent-workflow.js';
import type { AgentMessage, ModelTurn, ToolApproval, ToolCallItem } from './transcript.js';

// Talking to a running agent: a user message (starting the conversation if it is new), the tool
// calls in flight, and a decision on one that waits for approval.

/** The runner calls these helpers make (any runner that registers the agent's workflows). */
export type AgentRunner = Pick<Runner, 'get' | 'signal'>;

/** A tool call of the latest model response that has not settled, with the child instance that runs it. */
export interface PendingToolCall extends ToolCallItem {
  /** The child instance running the call: approvals are its signals. */
  child: string;
}

/**
 * Sends a user message to agent `id` (the `message` signal, deduplicated by the message id),
 * starting the conversation with workflow `agent` first if it does not exist. With `wait: 'write'`
 * it resolves once the message is stored; the agent answers in the background.
 */
export async function sendMessage(
  runner: AgentRunner,
  agent: string,
  id: string,
  message: AgentMessage,
  options: CallOptions = {},
): Promise<Snapshot> {
  return (runner as Runner).signal(id, MESSAGE_SIGNAL, message, {
    signalId: `message:${message.id}`,
    startIfMissing: { workflow: agent, input: {} },
    ...options,
  });
}

/** The tool calls of agent `id`'s latest response still running (an approval among them is `approval: true`). */
export async function pendingToolCalls(runner: AgentRunner, id: string): Promise<PendingToolCall[]> {
  const s = await runner.get(id);
  return s ? pendingIn(s) : [];
}

/** The unsettled tool calls of an agent snapshot (read from the store, resolved or not: the calls are kept inline). */
export function pendingIn(s: Snapshot): PendingToolCall[] {
  const turn = s.steps[MODEL_STEP]?.output as
    | (Partial<ModelTurn> & { keep?: Partial<ModelTurn> })
    | undefined;
  const calls = turn?.toolCalls ?? turn?.keep?.toolCalls ?? [];
  const out: PendingToolCall[] = [];
  for (const task of Object.values(s.tasks)) {
    if (
      task.step !== TOOLS_STEP ||
      task.phase !== 'run' ||
      task.child === undefined ||
      task.item === undefined
    )
      continue;
    const call = calls[task.item];
    if (call) out.push({ ...call, child: task.child });
  }
  return out.sort((a, b) => calls.indexOf(a) - calls.indexOf(b));
}

/**
 * Decides tool call `toolCallId` of agent `id`: approve it, approve it with edited arguments, or
 * reject it with a message the model reads. Throws `NOT_FOUND` when no running call has that id.
 */
export async function decideToolCall(
  runner: AgentRunner,
  id: string,
  toolCallId: string,
  decision: ToolApproval,
  options: CallOptions = {},
): Promise<Snapshot> {
  const call = (await pendingToolCalls(runner, id)).find((c) => c.toolCallId === toolCallId);
  if (!call)
    throw new StepfoldError(
      'NOT_FOUND',
      `instance ${JSON.stringify(id)} has no running tool call ${JSON.stringify(toolCallId)}`,
    );
  return (runner as Runner).signal(call.child, APPROVAL_SIGNAL, decision, {
    signalId: `approval:${toolCallId}`,
    ...options,
  });
}
