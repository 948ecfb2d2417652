import { type HandlerContext, type StreamStore, TaskError } from '@stepfold/engine';
import type { ToolSet } from 'ai';
import type { ToolApproval, ToolCallItem, ToolOutcome } from './transcript.js';

// The tool step: one proposed tool call, run once its approval (if its tool asks for one) says so.
// Its result goes to the agent's stream at once (the call runs in a child instance; a chat reads
// the agent's), so a reader sees a settled call before the next model call begins; the step's
// output is what the next model call reads.

/** The tool step's input (see `agentWorkflows`): the call, and the decision when it waited for one. */
export interface ToolStepInput {
  call: ToolCallItem;
  decision?: ToolApproval | null | undefined;
}

/** A decision as sent (the `approval` signal's data), checked: anything else is a rejection that says why. */
function decisionOf(raw: unknown): ToolApproval {
  const d = raw as Partial<{ decision: string; input: unknown; message: unknown }> | null | undefined;
  if (d?.decision === 'approve') return { decision: 'approve' };
  if (d?.decision === 'edit' && 'input' in d) return { decision: 'edit', input: d.input };
  if (d?.decision === 'reject')
    return { decision: 'reject', message: typeof d.message === 'string' ? d.message : undefined };
  return { decision: 'reject', message: 'the decision was not approve, edit or reject' };
}

/**
 * Appends a settled call's chunk to the agent's stream (one append, fenced by this attempt), or,
 * without the store's stream, to the step's own (`ctx.stream`: the harness records it there).
 */
async function settled(ctx: HandlerContext<ToolStepInput>, stream: StreamStore | undefined, chunk: unknown) {
  if (!stream) {
    ctx.stream.write(chunk);
    await ctx.stream.flush();
    return;
  }
  await stream.append(ctx.input.call.agent, `tool:${ctx.input.call.toolCallId}`, ctx.attempt, [chunk]);
}

/**
 * The tool step's handler (registered as `<name>.tool` by `agentHandlers`). Given the store's
 * `stream`, a settled call's chunk goes to the agent's stream; otherwise to the step's own.
 */
export function toolStep(tools: ToolSet, stream?: StreamStore | undefined) {
  return async (ctx: HandlerContext<ToolStepInput>): Promise<ToolOutcome> => {
    const { call } = ctx.input;
    const base = { toolCallId: call.toolCallId, toolName: call.toolName };
    const decision = call.approval ? decisionOf(ctx.input.decision) : undefined;
    if (decision?.decision === 'reject') {
      await settled(ctx, stream, { type: 'tool-output-denied', toolCallId: call.toolCallId });
      return { ...base, status: 'rejected', message: decision.message };
    }
    const tool = tools[call.toolName] as
      | { execute?: (input: unknown, options: Record<string, unknown>) => unknown }
      | undefined;
    if (!tool?.execute)
      throw new TaskError(`no tool ${JSON.stringify(call.toolName)} with an execute`, {
        code: 'UNKNOWN_TOOL',
        retryable: false,
      });
    const input = decision?.decision === 'edit' ? decision.input : call.input;
    // The tool-call id is the call's identity across attempts: a tool that has side effects dedupes by it.
    let output = await tool.execute(input, {
      toolCallId: call.toolCallId,
      messages: [],
      abortSignal: ctx.signal,
      // `context` is AI SDK 7's name for it; `experimental_context` the name before, kept for older tools.
      context: { idempotencyKey: ctx.idempotencyKey, attempt: ctx.attempt },
      experimental_context: { idempotencyKey: ctx.idempotencyKey, attempt: ctx.attempt },
    });
    // A tool that streams its output (an async iterable) settles with its last value.
    if (output !== null && typeof output === 'object' && Symbol.asyncIterator in output) {
      let last: unknown;
      for await (const part of output as AsyncIterable<unknown>) last = part;
      output = last;
    }
    const json = output === undefined ? null : JSON.parse(JSON.stringify(output));
    await settled(ctx, stream, { type: 'tool-output-available', toolCallId: call.toolCallId, output: json });
    return {
      ...base,
      status: 'ok',
      output: json,
      ...(decision?.decision === 'edit' ? { editedInput: input } : {}),
    };
  };
}
