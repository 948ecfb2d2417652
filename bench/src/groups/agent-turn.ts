import {
  agentHandlers,
  agentWorkflows,
  type ModelTurn,
  modelStep,
  type PreparedCall,
  prepareCall,
  sendMessage,
  type ToolOutcome,
  toolMessage,
  toolStep,
} from '@stepfold/ai';
import {
  composition,
  createRunner,
  type DefinitionInput,
  type Handler,
  type HandlerContext,
  type Runner,
} from '@stepfold/engine';
import { createPostgresStore } from '@stepfold/store-postgres';
import { type LanguageModel, tool } from 'ai';
import pg from 'pg';
import { z } from 'zod';
import { BENCH_DB, ensurePgDatabase, pgDatabaseUrl } from '../backends.js';
import { compareAsync } from '../measure.js';
import { type Group, type Row, rateRow } from '../row.js';
import { serviceUrls } from '../services.js';

// `agent-turn-postgres`: what the agent loop costs around the work of a turn. One turn is a user
// message, a model call that streams a sentence and proposes two tool calls, both tools, and a
// second model call that answers. Ours: a new conversation of `@stepfold/ai`'s agent per turn (its
// collect, prepare, model, choice and map steps, each tool call a child workflow). Baseline: the
// same handlers' work (the same model calls streamed to the instance's stream, the same tools) as
// four plain task steps of one workflow per turn. One runner over PostgreSQL runs both, turns in
// flight at once, rounds alternating. Informational.

const IN_FLIGHT = 4;
const WORDS = 'Let me look up order 7 and check its refund before I answer you. ';

type ModelV4 = Extract<LanguageModel, { specificationVersion: 'v4' }>;
type Part = Awaited<ReturnType<ModelV4['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;

/** A model that answers at once: two tool calls until the prompt has their results, then a sentence. */
function instantModel(): LanguageModel {
  const usage = {
    inputTokens: { total: 20, noCache: 20, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 12, text: 12, reasoning: undefined },
  };
  const text = (id: string): Part[] => [
    { type: 'text-start', id },
    ...WORDS.split(/(?<= )/).map((delta): Part => ({ type: 'text-delta', id, delta })),
    { type: 'text-end', id },
  ];
  const model: ModelV4 = {
    specificationVersion: 'v4',
    provider: 'bench',
    modelId: 'instant',
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('the bench model only streams')),
    doStream: async ({ prompt }) => {
      const answered = prompt.some((m) => m.role === 'tool');
      const parts: Part[] = answered
        ? [
            { type: 'stream-start', warnings: [] },
            ...text('a'),
            { type: 'finish', usage, finishReason: { unified: 'stop', raw: undefined } },
          ]
        : [
            { type: 'stream-start', warnings: [] },
            ...text('q'),
            { type: 'tool-call', toolCallId: 'lookup', toolName: 'lookupOrder', input: '{"id":"7"}' },
            { type: 'tool-call', toolCallId: 'refund', toolName: 'checkRefund', input: '{"id":"7"}' },
            { type: 'finish', usage, finishReason: { unified: 'tool-calls', raw: undefined } },
          ];
      return {
        stream: new ReadableStream<Part>({
          start(controller) {
            for (const p of parts) controller.enqueue(p);
            controller.close();
          },
        }),
      };
    },
  };
  return model;
}

const tools = {
  lookupOrder: tool({
    description: 'Looks up an order',
    inputSchema: z.object({ id: z.string() }),
    execute: async ({ id }) => ({ id, status: 'delivered', totalCents: 4200 }),
  }),
  checkRefund: tool({
    description: 'Says whether an order can be refunded',
    inputSchema: z.object({ id: z.string() }),
    execute: async ({ id }) => ({ id, refundable: true }),
  }),
};

/** The baseline: the same model calls and tool calls as four plain task steps. */
const plain: DefinitionInput = {
  name: 'plain-turn',
  version: 1,
  start: 'ask',
  steps: {
    ask: { kind: 'task', handler: 'plain.ask', next: 'lookup' },
    lookup: { kind: 'task', handler: 'plain.lookup', next: 'check' },
    check: { kind: 'task', handler: 'plain.check', next: 'answer' },
    answer: { kind: 'task', handler: 'plain.answer' },
  },
};

function plainHandlers(model: LanguageModel): Record<string, Handler> {
  const callModel = modelStep({ model, tools });
  const callTool = toolStep(tools);
  // The steps' contexts as the agent's handlers read them, with the input each step computes.
  const as = <I>(ctx: HandlerContext, input: I) =>
    ({
      input,
      stream: ctx.stream,
      signal: ctx.signal,
      instanceId: ctx.instanceId,
      iteration: ctx.iteration,
      attempt: ctx.attempt,
      idempotencyKey: ctx.idempotencyKey,
    }) as unknown as HandlerContext<I>;
  const first = (ctx: HandlerContext) => ctx.outputs['ask'] as ModelTurn;
  const runTool = (i: number) => (ctx: HandlerContext) =>
    callTool(as(ctx, { call: first(ctx).toolCalls[i]! }));
  return {
    'plain.ask': ((ctx) =>
      callModel(
        as(ctx, prepareCall({ start: { messages: [{ id: 'm1', text: 'Refund order 7?' }] } })),
      )) as Handler,
    'plain.lookup': runTool(0) as Handler,
    'plain.check': runTool(1) as Handler,
    'plain.answer': ((ctx) => {
      const turn = first(ctx);
      const results = [ctx.outputs['lookup'], ctx.outputs['check']] as ToolOutcome[];
      const call: PreparedCall = {
        transcript: [...turn.transcript, toolMessage(turn.toolCalls, results)],
        seen: turn.seen,
        fresh: true,
        opensTurn: false,
        usageTotal: turn.usageTotal,
      };
      return callModel(as(ctx, call));
    }) as Handler,
  };
}

/** One agent turn, in a new conversation: resolves once the model answered. */
async function agentTurn(runner: Runner, id: string): Promise<number> {
  let s = await sendMessage(runner, 'bench-agent', id, { id: 'm1', text: 'Refund order 7?' });
  // The tool calls' ends reach the agent through its inbox: wait for the answer if it is not in yet.
  let waits = 0;
  while ((s?.steps['model']?.output as ModelTurn | undefined)?.status !== 'answered') {
    if (++waits > 2_000) throw new Error(`agent ${id} did not answer`);
    await new Promise((r) => setTimeout(r, 1));
    s = (await runner.get(id))!;
  }
  return waits;
}

export const agentTurnPostgres: Group = {
  name: 'agent-turn-postgres',
  async run(): Promise<Row[]> {
    const unit = 'turns/s';
    let pool: pg.Pool;
    try {
      const { pg: url } = serviceUrls();
      await ensurePgDatabase(url, BENCH_DB);
      pool = new pg.Pool({ connectionString: pgDatabaseUrl(url, BENCH_DB), max: 8 });
      await pool.query('SELECT 1');
    } catch (e) {
      const note = `not measured: ${e instanceof Error ? e.message : String(e)}; run \`pnpm services\``;
      return [{ ...rateRow('agent-turn-postgres', null, null, unit, null), note }];
    }
    const schema = 'stepfold_agent_bench';
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    const store = createPostgresStore({ pool, schema });
    await store.setup();
    try {
      const model = instantModel();
      const { agent, tool: toolCall } = agentWorkflows({ name: 'bench-agent' });
      const runner = createRunner({
        store,
        workflows: [agent, toolCall, plain],
        kinds: [composition],
        handlers: { ...agentHandlers({ name: 'bench-agent', model, tools, store }), ...plainHandlers(model) },
      });
      let n = 0;
      let waited = 0;
      const [ours, base] = await compareAsync(
        async () => {
          waited += await agentTurn(runner, `agent-${process.pid}-${n++}`);
        },
        async () => {
          const s = await runner.start('plain-turn', `plain-${process.pid}-${n++}`, {});
          if (s.status !== 'completed') throw new Error(`plain turn ${s.id} ended ${s.status}`);
        },
        { warmupMs: 1_000, sampleMs: 1_500, samples: 6, concurrency: IN_FLIGHT },
      );
      await runner.idle();
      return [
        rateRow('agent-turn-postgres', ours.hz, base.hz, unit, null, {
          note: `PostgreSQL; a turn: a model call streaming ${WORDS.split(' ').length - 1} words and proposing 2 tool calls, both tools, a model call that answers (a model that answers at once); ours: @stepfold/ai's agent, a new conversation per turn (tool calls as child workflows); baseline: the same handlers' work as 4 plain task steps; ${IN_FLIGHT} turns in flight on one runner, rounds alternating`,
          details: { oursSamples: ours.samples, plainSamples: base.samples, answerWaits: waited },
        }),
      ];
    } finally {
      await store.close();
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await pool.end();
    }
  },
};
