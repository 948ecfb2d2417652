import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import {
  createMemoryStore,
  createRunner,
  createWorker,
  flowControl,
  type HandlerContext,
  isTerminal,
  type Store,
  TaskError,
  type Worker,
  workflow,
} from '@stepfold/engine';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ATTR, createOtelInstrumentation, createOtelMetrics, METRIC } from '../src/index.js';

// A real metrics SDK (MeterProvider + InMemoryMetricExporter), never registered globally: the
// metrics get it through their options, and each test reads what one collection exported.

const pay = workflow('pay', 1, { defaults: { retry: { maxAttempts: 2, initialMs: 5, jitter: 0 } } })
  .task('charge', { handler: 'charge' })
  .build();
const nap = workflow('nap', 1).sleep('rest', { ms: 60_000 }).build();

let exporter: InMemoryMetricExporter;
let reader: PeriodicExportingMetricReader;
let provider: MeterProvider;

beforeEach(() => {
  exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  provider = new MeterProvider({ readers: [reader] });
});

afterEach(async () => {
  await provider.shutdown();
});

type Attrs = Record<string, unknown>;

/** The data points of `name` in a fresh collection. */
async function collect(): Promise<(name: string) => DataPoint<unknown>[]> {
  exporter.reset();
  await reader.forceFlush();
  const metrics = exporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
  return (name) =>
    metrics.filter((m) => m.descriptor.name === name).flatMap((m) => m.dataPoints as DataPoint<unknown>[]);
}

/** The value of the point whose attributes include `attrs` (0 when there is none). */
function value(points: DataPoint<unknown>[], attrs: Attrs = {}): number {
  const p = points.find((d) => Object.entries(attrs).every(([k, v]) => d.attributes[k] === v));
  if (!p) return 0;
  return typeof p.value === 'number' ? p.value : (p.value as Histogram).count;
}

/** charge: `ok-*` succeeds, `flaky-*` fails its first attempt, `bad-*` always fails. */
const charge = (ctx: HandlerContext) => {
  if (ctx.instanceId.startsWith('bad')) throw new TaskError('declined', { code: 'DECLINED' });
  if (ctx.instanceId.startsWith('flaky') && ctx.attempt === 1) throw new Error('gateway timeout');
  return 'paid';
};

/** Waits until every instance of `ids` has ended (a retry waits out its backoff first). */
async function settled(store: Store, ids: string[]): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const all = await Promise.all(ids.map((id) => store.load(id)));
    if (all.every((s) => s !== null && isTerminal(s.status))) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`not all of ${ids.join(', ')} ended`);
}

/** Starts `ids` through `start` while `worker` runs them, until every one has ended. */
async function runAll(worker: Worker, store: Store, start: (id: string) => Promise<unknown>, ids: string[]) {
  await worker.start();
  for (const id of ids) await start(id);
  await settled(store, ids);
  await worker.stop();
}

describe('createOtelMetrics', () => {
  it('counts starts, ends and attempts by workflow, step and outcome, and times each attempt', async () => {
    const metrics = createOtelMetrics({ meterProvider: provider });
    const store = createMemoryStore();
    const opts = { store, workflows: [pay, nap], instrument: metrics.instrument };
    const runner = createRunner({ ...opts, handlers: { charge } });
    const api = createRunner({ ...opts, handlers: { charge }, execute: false });
    const worker = createWorker({ runner, poll: { minMs: 2, maxMs: 20 } });
    await runAll(worker, store, (id) => api.start('pay', id), ['ok-1', 'ok-2', 'flaky-1', 'bad-1']);
    await api.start('pay', 'ok-1').catch(() => {}); // the id is taken: nothing starts
    await api.start('nap', 'nap-1');
    await api.cancel('nap-1', 'not needed');

    const read = await collect();
    const pays = { [ATTR.workflowName]: 'pay' };
    expect(value(read(METRIC.workflowsStarted), pays)).toBe(4);
    expect(value(read(METRIC.workflowsCompleted), pays)).toBe(3);
    expect(value(read(METRIC.workflowsFailed), pays)).toBe(1);
    expect(value(read(METRIC.workflowsStarted), { [ATTR.workflowName]: 'nap' })).toBe(1);
    expect(
      value(read(METRIC.workflowsCancelled), { [ATTR.workflowName]: 'nap', [ATTR.status]: 'cancelled' }),
    ).toBe(1);
    const step = { ...pays, [ATTR.step]: 'charge', [ATTR.phase]: 'run' };
    // ok ×2 + flaky's second; flaky's first + bad's two.
    expect(value(read(METRIC.taskAttempts), { ...step, [ATTR.outcome]: 'completed' })).toBe(3);
    expect(value(read(METRIC.taskAttempts), { ...step, [ATTR.outcome]: 'failed' })).toBe(3);
    expect(value(read(METRIC.taskDuration), { ...step, [ATTR.outcome]: 'completed' })).toBe(3);
    expect(value(read(METRIC.taskDuration), { ...step, [ATTR.outcome]: 'failed' })).toBe(3);
    // No instance id ever becomes an attribute.
    for (const name of Object.values(METRIC))
      for (const p of read(name)) expect(Object.values(p.attributes)).not.toContain('ok-1');
  });

  it('records a worker’s claims by lane and its lag by workflow, and still calls the worker’s own observers', async () => {
    const metrics = createOtelMetrics({ meterProvider: provider });
    const store = createMemoryStore();
    const runner = createRunner({ store, workflows: [pay], handlers: { charge } });
    const api = createRunner({ store, workflows: [pay], handlers: { charge }, execute: false });
    const own: string[] = [];
    const on = metrics.workerEvents({ lag: (_ms, id) => own.push(id) });
    const worker = createWorker({ runner, poll: { minMs: 2, maxMs: 20 }, on });
    await runAll(worker, store, (id) => api.start('pay', id), ['ok-1', 'ok-2', 'ok-3']);

    const read = await collect();
    const claims = read(METRIC.workerClaims).reduce((n, p) => n + value([p]), 0);
    expect(claims).toBeGreaterThanOrEqual(3);
    for (const p of read(METRIC.workerClaims)) expect(['pay', '*']).toContain(p.attributes[ATTR.lane]);
    expect(value(read(METRIC.workerLag), { [ATTR.workflowName]: 'pay' })).toBe(own.length);
    expect(new Set(own)).toEqual(new Set(['ok-1', 'ok-2', 'ok-3']));
  });

  it('observes write counts, lost races, a worker’s runs, the due backlog and flow keys at each collection, until closed', async () => {
    const metrics = createOtelMetrics({ meterProvider: provider });
    const limited = workflow('limited', 1)
      .input<{ customer: string }>()
      .task('call', { handler: 'call', concurrency: { key: 'input.customer', limit: 1 } })
      .build();
    let letGo!: () => void;
    const gate = new Promise<void>((r) => (letGo = r));
    const store = createMemoryStore();
    const runner = createRunner({
      store,
      workflows: [limited],
      kinds: [flowControl],
      handlers: { call: () => gate.then(() => 'done') },
    });
    const first = runner.start('limited', 'l-1', { customer: 'c-1' });
    await runner.start('limited', 'l-2', { customer: 'c-1' }, { wait: 'write' }); // waits for l-1's slot
    const asked: Array<readonly string[]> = [];
    const worker = { stats: { running: 2, queued: 5 } as never };
    const observation = metrics.observe({
      // The runner's counters as a long-lived runner would have them.
      runner: {
        stats: { writes: 7, conflicts: 1, lostRaces: { tick: 1, take: 2 } },
        store,
        workflows: runner.workflows,
      },
      worker,
      backlog: async ({ workflows }) => {
        asked.push(workflows);
        return { limited: 4 };
      },
    });

    const read = await collect();
    expect(value(read(METRIC.writes))).toBe(7);
    expect(value(read(METRIC.writeConflicts), { [ATTR.race]: 'take' })).toBe(2);
    expect(value(read(METRIC.workerTasks), { [ATTR.taskState]: 'queued' })).toBe(5);
    expect(value(read(METRIC.dueBacklog), { [ATTR.lane]: 'limited' })).toBe(4);
    expect(asked).toEqual([['limited']]);
    const key = { [ATTR.flowScope]: 'limited/call', [ATTR.flowKey]: 'c-1' };
    expect(value(read(METRIC.flowHolders), key)).toBe(1);
    expect(value(read(METRIC.flowWaiters), key)).toBe(1);

    observation.close();
    await collect();
    expect(asked).toHaveLength(1); // nothing is read once closed
    letGo();
    await first;
    await runner.idle();
  });

  it('createOtelInstrumentation({ metrics }) gives one instrumentation with both spans and metrics', async () => {
    const spans = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
    const metrics = createOtelMetrics({ meterProvider: provider });
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [pay],
      handlers: { charge },
      instrument: createOtelInstrumentation({ tracerProvider, metrics }),
    });
    const done = await runner.start('pay', 'ok-1');
    expect(done.status).toBe('completed');
    const read = await collect();
    expect(value(read(METRIC.workflowsCompleted), { [ATTR.workflowName]: 'pay' })).toBe(1);
    expect(value(read(METRIC.taskDuration), { [ATTR.outcome]: 'completed' })).toBe(1);
    const names = spans.getFinishedSpans().map((s) => s.name);
    expect(names).toContain('stepfold.task charge');
    expect(names).toContain('stepfold.event start');
    // The start still carries its span: one trace from start to handler.
    const task = spans.getFinishedSpans().find((s) => s.name === 'stepfold.task charge')!;
    const start = spans.getFinishedSpans().find((s) => s.name === 'stepfold.event start')!;
    expect(task.spanContext().traceId).toBe(start.spanContext().traceId);
    await tracerProvider.shutdown();
  });
});
