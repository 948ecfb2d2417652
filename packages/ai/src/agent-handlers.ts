import type { Handler, Store } from '@stepfold/engine';
import type { LanguageModel, ToolSet } from 'ai';
import { modelStep } from './model-step.js';
import { toolStep } from './tool-step.js';
import { prepareCall } from './transcript.js';

/** Options of {@link agentHandlers}. */
export interface AgentHandlersOptions {
  /** The agent workflow's name (as given to `agentWorkflows`). */
  name: string;
  /** Any AI SDK language model (a provider's, or a mock with scripted outputs in tests). */
  model: LanguageModel;
  /** The agent's tools (`tool({ description, inputSchema, execute, needsApproval })`). */
  tools: ToolSet;
  /** The system prompt. */
  system?: string | undefined;
  /**
   * The runner's store: a settled tool call's output then goes to the agent's stream at once (the
   * call runs in a child instance). Without it, to the tool call's own stream.
   */
  store?: Pick<Store, 'stream'> | undefined;
}

/**
 * The three handlers of an agent, by the names `agentWorkflows` gives them: `<name>.prepare` (the
 * next transcript, pure), `<name>.model` (one model call, streamed) and `<name>.tool` (one tool
 * call). Spread them into a runner's `handlers`.
 */
export function agentHandlers(options: AgentHandlersOptions): Record<string, Handler> {
  return {
    [`${options.name}.prepare`]: ((ctx) => prepareCall(ctx.input as never)) as Handler,
    [`${options.name}.model`]: modelStep(options) as Handler,
    [`${options.name}.tool`]: toolStep(options.tools, options.store?.stream) as Handler,
  };
}
