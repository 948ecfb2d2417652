import { context, type Span, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import {
  composition,
  createMemoryStore,
  createRunner,
  defineWorkflow,
  type HandlerContext,
  isTerminal,
  type Snapshot,
  workflow,
} from '@stepfold/engine';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ATTR, createOtelInstrumentation } from '../src/index.js';

// One trace spans a parent and its children: the runner starts each child with the parent's trace
// carrier, so a child step's child and every child of a map of workflows record their handler
// spans in the trace of the request that started the parent. A real SDK with the in-memory
// exporter, as otel.test.ts has it; only the context manager is global, set and torn down per test.

/** One line of an order: picked, then packed, each a handler. */
const shipLine = workflow('ship-line', 1)
  .task('pick', { handler: 'pick' })
  .task('pack', { handler: 'pack' })
  .build();

/** reserve → a child (one line) → a map of child workflows (every line) → charge. */
const order = defineWorkflow({
  name: 'order',
  version: 1,
  start: 'reserve',
  steps: {
    reserve: { kind: 'task', handler: 'reserve', next: 'first' },
    first: { kind: 'child', workflow: 'ship-line', input: { sku: 'input.first' }, next: 'lines' },
    lines: { kind: 'map', items: 'input.lines', workflow: 'ship-line', maxConcurrency: 2, next: 'charge' },
    charge: { kind: 'task', handler: 'charge' },
  },
});

let exporter: InMemorySpanExporter;
let provider: BasicTracerProvider;

beforeEach(() => {
  exporter = new InMemorySpanExporter();
  provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});

afterEach(async () => {
  context.disable();
  await provider.shutdown();
});

/** Runs the order (a child step, a map of 3 child workflows) inside a request span, to its end. */
async function runOrder() {
  const store = createMemoryStore();
  /** The trace id active in each handler call, by instance and step. */
  const active = new Map<string, string | undefined>();
  const note = (ctx: HandlerContext) =>
    active.set(`${ctx.instanceId} ${ctx.step}`, trace.getActiveSpan()?.spanContext().traceId);
  const noted = (f: (ctx: HandlerContext) => unknown) => (ctx: HandlerContext) => {
    note(ctx);
    return f(ctx);
  };
  const runner = createRunner({
    kinds: [composition],
    store,
    workflows: [order, shipLine],
    handlers: {
      reserve: noted(() => ({ id: 'R1' })),
      pick: noted((ctx) => ({ picked: (ctx.input as { sku: string }).sku })),
      pack: noted(() => ({ packed: true })),
      charge: noted(() => ({ ok: true })),
    },
    instrument: createOtelInstrumentation({ tracerProvider: provider }),
  });
  const input = { first: 'F', lines: [{ sku: 'A' }, { sku: 'B' }, { sku: 'C' }] };
  const request = await provider.getTracer('test').startActiveSpan('POST /orders', async (span: Span) => {
    await runner.start('order', 'o-1', input);
    span.end();
    return span.spanContext();
  });
  let s = (await runner.get('o-1')) as Snapshot;
  for (let i = 0; i < 20 && !isTerminal(s.status); i++)
    s = await runner.tick('o-1', (s.wakeAt ?? Date.now()) + 1);
  expect(s.status).toBe('completed');
  return { store, active, request, spans: exporter.getFinishedSpans() };
}

const children = ['o-1/1/first/1', 'o-1/1/lines/1/0', 'o-1/1/lines/1/1', 'o-1/1/lines/1/2'];

describe('a parent and its children in one trace', () => {
  it('a child step and a map of 3 child workflows: every span has the trace of the request', async () => {
    const { store, active, request, spans } = await runOrder();
    for (const id of children) {
      const child = (await store.load(id))!;
      expect(child.status, id).toBe('completed');
      // The carrier each child was started with names the parent's trace.
      expect(child.trace?.traceparent, id).toMatch(new RegExp(`^00-${request.traceId}-`));
    }

    expect(new Set(spans.map((x) => x.spanContext().traceId))).toEqual(new Set([request.traceId]));
    // The handler spans of the parent and of every child are among them, each once per step.
    const handlerSpans = spans
      .filter((x) => x.name.startsWith('stepfold.task ') && x.attributes[ATTR.handler] !== '$child')
      .map((x) => `${x.attributes[ATTR.instanceId]} ${x.attributes[ATTR.step]}`)
      .sort();
    expect(handlerSpans).toEqual(
      ['o-1 reserve', 'o-1 charge', ...children.flatMap((id) => [`${id} pick`, `${id} pack`])].sort(),
    );
    // And each handler ran with a span of that trace active.
    expect(active.size).toBe(handlerSpans.length);
    for (const [key, traceId] of active) expect(traceId, key).toBe(request.traceId);
    // The children's start events are in the trace too, one per child.
    const starts = spans.filter((x) => x.name === 'stepfold.event start');
    expect(starts.map((x) => x.attributes[ATTR.instanceId]).sort()).toEqual(['o-1', ...children].sort());
  });

  it("each child's spans nest under its own start span, which sits under the parent's span that started it", async () => {
    const { store, spans } = await runOrder();
    const byId = new Map(spans.map((x) => [x.spanContext().spanId, x]));
    const parentOf = (x: (typeof spans)[number]) => byId.get(x.parentSpanContext?.spanId ?? '');
    const of = (id: string) => spans.filter((x) => x.attributes[ATTR.instanceId] === id);
    const rootStart = of('o-1').find((x) => x.name === 'stepfold.event start')!;
    for (const id of children) {
      const start = of(id).find((x) => x.name === 'stepfold.event start')!;
      // The child's own span: it names the parent and the step (and item) that started it, and
      // sits under a span of the parent's.
      const map = id.includes('/lines/');
      expect(start.attributes, id).toMatchObject({
        [ATTR.parentId]: 'o-1',
        [ATTR.parentStep]: map ? 'lines' : 'first',
        ...(map ? { [ATTR.parentItem]: Number(id.at(-1)) } : {}),
      });
      expect(parentOf(start)?.attributes[ATTR.instanceId], id).toBe('o-1');
      // Every other span of the child (its handlers and its events) is under that one, not the parent's.
      const rest = of(id).filter((x) => x !== start);
      expect(rest.map((x) => x.name).sort(), id).toEqual([
        'stepfold.event task.completed',
        'stepfold.event task.completed',
        'stepfold.task pack',
        'stepfold.task pick',
      ]);
      for (const x of rest) expect(parentOf(x), `${id} ${x.name}`).toBe(start);
      // The child carries its start's span: a worker elsewhere nests its spans there too.
      const child = (await store.load(id))!;
      expect(child.trace?.traceparent, id).toContain(`-${start.spanContext().spanId}-`);
    }
    // So the parent's start span holds the parent's own spans only.
    const under = spans.filter((x) => parentOf(x) === rootStart);
    expect(new Set(under.map((x) => x.attributes[ATTR.instanceId]))).toEqual(new Set(['o-1']));
  });
});
