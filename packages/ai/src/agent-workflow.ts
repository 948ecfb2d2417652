import type { DefinitionInput } from '@stepfold/engine';

// The agent loop as workflow data, from the kinds the engine already has:
//
//   begin ─(resumed)─► listen ─► inbox ─► prepare ─► ready ─(fresh)─► model ─► route ─(tools)─► tools ─► inbox …
//     └──────────────────────────┘                     └─(nothing new)─► listen     ├─(answered)─► listen
//                                                                                   └─(answered, N turns)─► rotate
//
// `listen` waits for the user's next message; `inbox` (a draining collect) picks up the messages
// that arrived mid-turn, so they reach the next model call; `prepare` (pure) builds the next
// transcript; `model` is one model call, its output the transcript plus what the model proposed;
// `tools` is a map of one child workflow per tool call (approval gate, then the tool). A settled
// tool call is a completed child: nothing runs it again, and a model call that is retried reads
// the same settled results.

/** Options of {@link agentWorkflows}. */
export interface AgentWorkflowOptions {
  /** The agent workflow's name; its tool-call child is `<name>-tool`, its handlers `<name>.prepare`, `<name>.model` and `<name>.tool`. */
  name: string;
  /** The version of both definitions (default 1). */
  version?: number | undefined;
  /** Model calls per run: once an answer is given after this many, the run continues as new with the transcript (default 20). */
  turnsPerRun?: number | undefined;
  /** How long one model call may take (ms, default 10 minutes). */
  modelTimeoutMs?: number | undefined;
  /** How long one tool call may take (ms, default 10 minutes). */
  toolTimeoutMs?: number | undefined;
  /** How long a tool call waits for its approval before it fails (ms; default: it waits as long as it takes). */
  approvalTimeoutMs?: number | undefined;
  /**
   * How often the loop looks at a tool call whose end it has not heard of (ms, default 30 s): a
   * tool call reports its end after the write that settles it, so a worker that dies in between
   * delays the loop by at most this long. Each look is one write while a call waits for approval.
   */
  toolCheckMs?: number | undefined;
  /** At most this many tool calls of one model response run at once (default 10). */
  toolConcurrency?: number | undefined;
  /** Attempts of a model call and of a tool call before they fail (default 3). */
  maxAttempts?: number | undefined;
}

/** The two definitions of an agent, to register with a runner (`workflows: [agent, tool]`, `kinds: [composition]`). */
export interface AgentWorkflows {
  /** The loop: one instance per conversation. */
  agent: DefinitionInput;
  /** One tool call: the approval gate (when its tool asks for one), then the tool. */
  tool: DefinitionInput;
  /** The handler names the definitions use (see `agentHandlers`). */
  handlers: { prepare: string; model: string; tool: string };
}

/** The signal a user message is sent as (data: an `AgentMessage`). */
export const MESSAGE_SIGNAL = 'message';
/** The signal a tool call's decision is sent as, to the tool call's child (data: a `ToolApproval`). */
export const APPROVAL_SIGNAL = 'approval';
/** The map step whose children are the tool calls of the latest model response. */
export const TOOLS_STEP = 'tools';
/** The model step. */
export const MODEL_STEP = 'model';

/** The outputs the model step keeps in the snapshot when the rest (the transcript) is offloaded: what the loop's conditions read. */
export const MODEL_KEEP = ['status', 'turn', 'toolCalls', 'usageTotal'] as const;

/**
 * The agent loop as two workflow definitions (plain JSON): the loop and its tool-call child. Run
 * them with `kinds: [composition]` and the handlers of `agentHandlers`; give the runner
 * `payloads: offloading(...)` so the transcript leaves the snapshot.
 *
 * @example
 * const { agent, tool } = agentWorkflows({ name: 'support' });
 * const runner = createRunner({ store, workflows: [agent, tool], kinds: [composition], handlers, payloads });
 */
export function agentWorkflows(options: AgentWorkflowOptions): AgentWorkflows {
  const { name } = options;
  const version = options.version ?? 1;
  const retry = { maxAttempts: options.maxAttempts ?? 3 };
  const handlers = { prepare: `${name}.prepare`, model: `${name}.model`, tool: `${name}.tool` };
  const toolWorkflow = `${name}-tool`;
  const agent: DefinitionInput = {
    name,
    version,
    start: 'begin',
    description: 'an agent loop: model calls, tool calls as child workflows, user messages as signals',
    steps: {
      begin: {
        kind: 'choice',
        branches: [{ when: { '>': [{ var: 'input.resumed' }, 0] }, next: 'listen' }],
        otherwise: 'inbox',
      },
      listen: { kind: 'collect', signal: MESSAGE_SIGNAL, maxItems: 1, next: 'inbox' },
      inbox: { kind: 'collect', signal: MESSAGE_SIGNAL, drain: true, next: 'prepare' },
      prepare: {
        kind: 'task',
        handler: handlers.prepare,
        input: {
          start: 'input',
          last: `outputs.${MODEL_STEP}`,
          results: `outputs.${TOOLS_STEP}`,
          listened: 'outputs.listen',
          messages: 'outputs.inbox',
        },
        retry,
        offload: { keep: ['fresh', 'usageTotal'] },
        next: 'ready',
      },
      ready: {
        kind: 'choice',
        branches: [{ when: { '==': [{ var: 'outputs.prepare.fresh' }, true] }, next: MODEL_STEP }],
        otherwise: 'listen',
      },
      [MODEL_STEP]: {
        kind: 'task',
        handler: handlers.model,
        input: 'outputs.prepare',
        retry,
        timeoutMs: options.modelTimeoutMs ?? 600_000,
        offload: { keep: [...MODEL_KEEP] },
        next: 'route',
      },
      route: {
        kind: 'choice',
        branches: [
          { when: { '==': [{ var: `outputs.${MODEL_STEP}.status` }, 'tools'] }, next: TOOLS_STEP },
          {
            when: {
              and: [
                { '==': [{ var: `outputs.${MODEL_STEP}.status` }, 'answered'] },
                { '>=': [{ var: `outputs.${MODEL_STEP}.turn` }, options.turnsPerRun ?? 20] },
              ],
            },
            next: 'rotate',
          },
        ],
        otherwise: 'listen',
      },
      [TOOLS_STEP]: {
        kind: 'map',
        items: `outputs.${MODEL_STEP}.toolCalls`,
        workflow: toolWorkflow,
        version,
        results: 'collect',
        // A tool call that failed for good (or timed out waiting for approval) is reported to the model.
        tolerated: { percent: 100 },
        maxConcurrency: options.toolConcurrency ?? 10,
        // A child's deadline in a map is when its end is looked up again, not when it fails.
        timeoutMs: options.toolCheckMs ?? 30_000,
        next: 'inbox',
      },
      rotate: {
        kind: 'continueAsNew',
        carry: { last: `outputs.${MODEL_STEP}`, resumed: `outputs.${MODEL_STEP}.turn` },
      },
    },
  };
  const tool: DefinitionInput = {
    name: toolWorkflow,
    version,
    start: 'gate',
    description: `one tool call of ${name}: its approval when its tool asks for one, then the tool`,
    steps: {
      gate: {
        kind: 'choice',
        branches: [{ when: { '==': [{ var: 'input.approval' }, true] }, next: APPROVAL_SIGNAL }],
        otherwise: 'call',
      },
      [APPROVAL_SIGNAL]: {
        kind: 'wait',
        signal: APPROVAL_SIGNAL,
        next: 'call',
        ...(options.approvalTimeoutMs === undefined ? {} : { timeoutMs: options.approvalTimeoutMs }),
      },
      call: {
        kind: 'task',
        handler: handlers.tool,
        input: { call: 'input', decision: `outputs.${APPROVAL_SIGNAL}` },
        retry,
        timeoutMs: options.toolTimeoutMs ?? 600_000,
      },
    },
  };
  return { agent, tool, handlers };
}
