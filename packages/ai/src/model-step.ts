import type { HandlerContext } from '@stepfold/engine';
import { type LanguageModel, streamText, type ToolSet } from 'ai';
import { addUsage, type ModelTurn, type PreparedCall, type ToolCallItem } from './transcript.js';

// The model step: one model call, its text streamed to `ctx.stream` as UI message chunks, its
// result (the response's messages, the tool calls it proposed, its usage) the step's output. The
// tools are offered to the model without their `execute`: a proposed call runs as its own step.

/** What a model step calls the model with. */
export interface ModelStepOptions {
  model: LanguageModel;
  tools: ToolSet;
  /** The system prompt. */
  system?: string | undefined;
}

/** Whether a call of `tool` with `input` waits for approval: its `needsApproval` (a boolean, or a function of the input). */
async function approvalOf(tools: ToolSet, call: { toolName: string; input: unknown; toolCallId: string }) {
  const policy = (tools[call.toolName] as { needsApproval?: unknown } | undefined)?.needsApproval;
  if (typeof policy === 'function') {
    const ask = policy as (input: unknown, options: { toolCallId: string; messages: unknown[] }) => unknown;
    return (await ask(call.input, { toolCallId: call.toolCallId, messages: [] })) === true;
  }
  return policy === true;
}

/** The tools as the model sees them: described, never run by the model call itself. */
function proposedOnly(tools: ToolSet): ToolSet {
  const out: Record<string, unknown> = {};
  for (const [name, t] of Object.entries(tools)) {
    const { execute: _run, needsApproval: _ask, ...described } = t as Record<string, unknown>;
    out[name] = described;
  }
  return out as ToolSet;
}

/** The model step's handler (registered as `<name>.model` by `agentHandlers`). */
export function modelStep(options: ModelStepOptions) {
  const offered = proposedOnly(options.tools);
  return async (ctx: HandlerContext<PreparedCall>): Promise<ModelTurn> => {
    const call = ctx.input;
    if (call.opensTurn) ctx.stream.write({ type: 'start' });
    let failure: unknown;
    const result = streamText({
      model: options.model,
      ...(options.system === undefined ? {} : { system: options.system }),
      messages: call.transcript,
      tools: offered,
      abortSignal: ctx.signal,
      onError: ({ error }) => {
        failure ??= error;
      },
    });
    for await (const chunk of result.toUIMessageStream({ sendStart: false, sendFinish: false })) {
      if (chunk.type === 'error') continue; // the attempt fails below, and its retry resets these
      ctx.stream.write(chunk);
    }
    if (failure !== undefined) throw failure;
    const [response, proposed, usage, text] = await Promise.all([
      result.response,
      result.toolCalls,
      result.usage,
      result.text,
    ]);
    const toolCalls: ToolCallItem[] = [];
    for (const c of proposed) {
      const item = {
        agent: ctx.instanceId,
        toolCallId: c.toolCallId,
        toolName: c.toolName,
        input: c.input ?? null,
      };
      const approval = await approvalOf(options.tools, item);
      toolCalls.push({ ...item, approval });
      if (approval)
        ctx.stream.write({
          type: 'tool-approval-request',
          approvalId: c.toolCallId,
          toolCallId: c.toolCallId,
        });
    }
    if (toolCalls.length === 0) ctx.stream.write({ type: 'finish' });
    // Every chunk is stored before the step completes: a failed append fails this attempt (its
    // retry streams the response again), where the runner's own close would only drop the rest.
    await ctx.stream.flush();
    const counted = {
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      totalTokens: usage.totalTokens,
    };
    return {
      status: toolCalls.length ? 'tools' : 'answered',
      turn: ctx.iteration,
      text,
      toolCalls,
      usage: counted,
      usageTotal: addUsage(
        call.usageTotal ?? { inputTokens: 0, outputTokens: 0, totalTokens: 0, modelCalls: 0 },
        counted,
      ),
      modelId: response.modelId,
      transcript: [...call.transcript, ...response.messages],
      seen: call.seen,
    };
  };
}
