import { type Attributes, trace } from '@opentelemetry/api';
import type { Handler, HandlerContext } from '@stepfold/engine';

// OpenTelemetry's GenAI attributes on an agent's spans: the span of a model step's attempt gets
// the model and the tokens in and out, the span of a tool step's attempt the tool's name and call
// id. The handlers run with their attempt's span active (`createOtelInstrumentation`), so a wrapper
// around them writes onto that span; an agent's handlers are told apart by the names
// `agentHandlers` of @stepfold/ai gives them (`<agent>.model`, `<agent>.tool`).

/** The GenAI semantic-convention attribute names {@link genAiHandlers} sets. */
export const GEN_AI_ATTR = {
  operation: 'gen_ai.operation.name',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
} as const;

/** Options of {@link genAiHandlers}. */
export interface GenAiOptions {
  /** The model asked for (`gen_ai.request.model`); default: the one that answered, as the response names it. */
  requestModel?: string | undefined;
}

/** What this reads of a model step's output (`ModelTurn` of @stepfold/ai). */
interface ModelTurnLike {
  modelId?: unknown;
  usage?: { inputTokens?: unknown; outputTokens?: unknown } | undefined;
}

/** What this reads of a tool step's input (`ToolStepInput` of @stepfold/ai). */
interface ToolInputLike {
  call?: { toolName?: unknown; toolCallId?: unknown } | undefined;
}

const numberOf = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const stringOf = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

/** `attributes` without the undefined entries. */
function defined(attributes: Record<string, string | number | undefined>): Attributes {
  const out: Attributes = {};
  for (const [k, v] of Object.entries(attributes)) if (v !== undefined) out[k] = v;
  return out;
}

function modelHandler(handler: Handler, options: GenAiOptions): Handler {
  return (async (ctx: HandlerContext) => {
    const span = trace.getActiveSpan();
    span?.setAttributes(
      defined({ [GEN_AI_ATTR.operation]: 'chat', [GEN_AI_ATTR.requestModel]: options.requestModel }),
    );
    const out = (await handler(ctx)) as ModelTurnLike | null | undefined;
    const model = stringOf(out?.modelId);
    span?.setAttributes(
      defined({
        [GEN_AI_ATTR.requestModel]: options.requestModel ?? model,
        [GEN_AI_ATTR.responseModel]: model,
        [GEN_AI_ATTR.inputTokens]: numberOf(out?.usage?.inputTokens),
        [GEN_AI_ATTR.outputTokens]: numberOf(out?.usage?.outputTokens),
      }),
    );
    return out;
  }) as Handler;
}

function toolHandler(handler: Handler): Handler {
  return ((ctx: HandlerContext) => {
    const call = (ctx.input as ToolInputLike | null | undefined)?.call;
    trace.getActiveSpan()?.setAttributes(
      defined({
        [GEN_AI_ATTR.operation]: 'execute_tool',
        [GEN_AI_ATTR.toolName]: stringOf(call?.toolName),
        [GEN_AI_ATTR.toolCallId]: stringOf(call?.toolCallId),
      }),
    );
    return handler(ctx);
  }) as Handler;
}

/**
 * An agent's handlers (`agentHandlers` of @stepfold/ai) with GenAI attributes on their spans: on
 * each model call's `gen_ai.operation.name` (`chat`), `gen_ai.request.model`,
 * `gen_ai.response.model`, `gen_ai.usage.input_tokens` and `gen_ai.usage.output_tokens`; on each
 * tool call's `execute_tool`, `gen_ai.tool.name` and `gen_ai.tool.call.id`. Give the runner
 * `instrument: createOtelInstrumentation()` (the spans) and a context manager (so the handler sees
 * its span). Other handlers are returned as they are.
 *
 * @example
 * handlers: genAiHandlers(agentHandlers({ name: 'support', model, tools, store }), { requestModel: 'gpt-4o-mini' }),
 */
export function genAiHandlers<H extends Record<string, Handler>>(handlers: H, options: GenAiOptions = {}): H {
  const out: Record<string, Handler> = {};
  for (const [name, handler] of Object.entries(handlers)) {
    if (name.endsWith('.model')) out[name] = modelHandler(handler, options);
    else if (name.endsWith('.tool')) out[name] = toolHandler(handler);
    else out[name] = handler;
  }
  return out as H;
}
