import {
  type CallOptions,
  isStepfoldError,
  type Runner,
  type Snapshot,
  StepfoldError,
} from '@stepfold/engine';
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
 * How long a decision waits for the call's child instance to be created, ms: the agent records the
 * call (and lists it pending) in the write that dispatches it, and the child is created right after
 * that write, or, when the worker died in between, by the worker that takes the call over.
 */
const CHILD_WAIT_MS = 10_000;

/**
 * Decides tool call `toolCallId` of agent `id`: approve it, approve it with edited arguments, or
 * reject it with a message the model reads. Throws `NOT_FOUND` when no running call has that id
 * (retryable when the call runs but its child instance was still not created after
 * ten seconds).
 */
export async function decideToolCall(
  runner: AgentRunner,
  id: string,
  toolCallId: string,
  decision: ToolApproval,
  options: CallOptions = {},
): Promise<Snapshot> {
  const running = async () => (await pendingToolCalls(runner, id)).find((c) => c.toolCallId === toolCallId);
  const call = await running();
  if (!call)
    throw new StepfoldError(
      'NOT_FOUND',
      `instance ${JSON.stringify(id)} has no running tool call ${JSON.stringify(toolCallId)}`,
    );
  const send = () =>
    (runner as Runner).signal(call.child, APPROVAL_SIGNAL, decision, {
      signalId: `approval:${toolCallId}`,
      ...options,
    });
  for (let waited = 0, pause = 20; ; waited += pause, pause = Math.min(pause * 2, 500)) {
    try {
      return await send();
    } catch (e) {
      if (!isStepfoldError(e, 'NOT_FOUND')) throw e;
      if (waited >= CHILD_WAIT_MS)
        throw new StepfoldError(
          'NOT_FOUND',
          `tool call ${JSON.stringify(toolCallId)} of instance ${JSON.stringify(id)} runs, but its child instance ${JSON.stringify(call.child)} was not created within ${CHILD_WAIT_MS} ms; try again`,
          { cause: e, retryable: true },
        );
    }
    await new Promise((r) => setTimeout(r, pause));
    // Settled meanwhile (or run again under another child): nothing of this call waits any more.
    if ((await running())?.child !== call.child)
      throw new StepfoldError(
        'NOT_FOUND',
        `instance ${JSON.stringify(id)} has no running tool call ${JSON.stringify(toolCallId)}`,
      );
  }
}
