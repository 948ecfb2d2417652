import { context, propagation, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import {
  createMemoryStore,
  createRunner,
  type HandlerContext,
  isTerminal,
  type Runner,
  type Snapshot,
  type Store,
  TaskError,
  workflow,
} from '@stepfold/engine';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ATTR, createOtelInstrumentation, type OtelInstrumentationOptions } from '../src/index.js';

// A real SDK (BasicTracerProvider + InMemorySpanExporter), never registered globally: the
// instrumentation gets it through its options. Only the context manager is global (the API
// cannot carry a context across awaits without one); each test enables it and tears it down.

/** reserve → charge → email; reserve and charge are compensated when a later step fails. */
const orderSaga = workflow('order-saga', 1, {
  defaults: { retry: { maxAttempts: 3, initialMs: 1_000, factor: 2, maxMs: 10_000, jitter: 0 } },
})
  .task('reserve', { handler: 'reserveStock', compensate: 'releaseStock' })
  .task('charge', { handler: 'chargeCard', compensate: 'refund' })
  .task('email', { handler: 'sendEmail' })
  .build();

const OTEL_GLOBALS = Symbol.for('opentelemetry.js.api.1');
/** The API's global registry (tracer provider, propagator, context manager...), entry by entry. */
const globals = () => ({ ...((globalThis as Record<symbol, object | undefined>)[OTEL_GLOBALS] ?? {}) });

let exporter: InMemorySpanExporter;
let provider: BasicTracerProvider;
let before: { registry: Record<string, unknown>; provider: unknown; propagator: string[] };

beforeEach(() => {
  before = { registry: globals(), provider: trace.getTracerProvider(), propagator: propagation.fields() };
  exporter = new InMemorySpanExporter();
  provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});

afterEach(async () => {
  context.disable(); // unregisters (and disables) the context manager this test set
  await provider.shutdown();
});

/** What the handlers saw: the span active in each call, by `step#attempt` (or `step!` when compensating). */
type Seen = Map<string, string | undefined>;

function handlers(seen: Seen, fail: { email?: boolean } = {}) {
  const note = (ctx: HandlerContext) =>
    seen.set(
      `${ctx.step}${ctx.phase === 'compensate' ? '!' : '#'}${ctx.attempt}`,
      trace.getActiveSpan()?.spanContext().spanId,
    );
  return {
    reserveStock: (ctx: HandlerContext) => {
      note(ctx);
      return { reservation: `R-${ctx.idempotencyKey}` };
    },
    releaseStock: (ctx: HandlerContext) => note(ctx) && null,
    chargeCard: (ctx: HandlerContext) => {
      note(ctx);
      if (ctx.attempt === 1) throw new TaskError('gateway timeout', { code: 'GATEWAY' });
      return { paymentId: 'P-1' };
    },
    refund: (ctx: HandlerContext) => note(ctx) && null,
    sendEmail: (ctx: HandlerContext) => {
      note(ctx);
      if (fail.email) throw new TaskError('mailbox gone', { code: 'BOUNCED', retryable: false });
      return { sent: true };
    },
  };
}

/** Ticks what is due, jumping the clock to each wake time, until the instance finishes. */
async function drive(runner: Runner, id: string, clock: { now: number }): Promise<Snapshot> {
  let s = (await runner.get(id))!;
  while (!isTerminal(s.status) && s.wakeAt !== null) {
    clock.now = Math.max(clock.now, s.wakeAt);
    await runner.processDue(clock.now);
    s = (await runner.get(id))!;
  }
  return s;
}

function makeRunner(store: Store, seen: Seen, clock: { now: number }, extra: Record<string, unknown> = {}) {
  const options: OtelInstrumentationOptions = { tracerProvider: provider };
  return createRunner({
    store,
    workflows: [orderSaga],
    handlers: handlers(seen, extra as { email?: boolean }),
    clock: () => clock.now,
    instrument: createOtelInstrumentation({ ...options, ...(extra.otel as object) }),
    ...(extra.execute === false ? { execute: false } : {}),
  });
}

const parentId = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const tasks = (spans: ReadableSpan[]) => spans.filter((s) => s.name.startsWith('stepfold.task '));
const attrs = (s: ReadableSpan) => s.attributes;

/** Starts `id` inside an active `POST /orders` span; returns that span's context. */
async function startInSpan(runner: Runner, id: string) {
  const tracer = provider.getTracer('test');
  return tracer.startActiveSpan('POST /orders', async (span: Span) => {
    await runner.start('order-saga', id, { sku: 'BOOK-7' });
    span.end();
    return span.spanContext();
  });
}

describe('createOtelInstrumentation', () => {
  it('one trace from the start through the last handler, a span per attempt, handlers see theirs', async () => {
    const clock = { now: 1_000 };
    const seen: Seen = new Map();
    const runner = makeRunner(createMemoryStore(), seen, clock);
    const request = await startInSpan(runner, 'order-1');
    // The retry is due later; it is ticked outside any span, as a poller would.
    expect(trace.getActiveSpan()).toBeUndefined();
    const s = await drive(runner, 'order-1', clock);
    expect(s.status).toBe('completed');

    const spans = exporter.getFinishedSpans();
    expect(new Set(spans.map((x) => x.spanContext().traceId))).toEqual(new Set([request.traceId]));
    const start = spans.find((x) => x.name === 'stepfold.event start')!;
    expect(parentId(start)).toBe(request.spanId);
    const attempts = tasks(spans);
    expect(attempts.map((x) => `${attrs(x)[ATTR.step]}#${attrs(x)[ATTR.attempt]}`)).toEqual([
      'reserve#1',
      'charge#1',
      'charge#2',
      'email#1',
    ]);
    for (const a of attempts) {
      // Every attempt hangs off the start's span, the one the carrier names.
      expect(parentId(a)).toBe(start.spanContext().spanId);
      expect(a.name).toBe(`stepfold.task ${attrs(a)[ATTR.step]}`);
      expect(attrs(a)).toMatchObject({
        [ATTR.instanceId]: 'order-1',
        [ATTR.workflowName]: 'order-saga',
        [ATTR.workflowVersion]: 1,
        [ATTR.phase]: 'run',
      });
      expect(attrs(a)[ATTR.idempotencyKey]).toBe(`order-1/1/${attrs(a)[ATTR.step]}/1`);
      // What the handler saw as its active span is this attempt's span.
      expect(seen.get(`${attrs(a)[ATTR.step]}#${attrs(a)[ATTR.attempt]}`)).toBe(a.spanContext().spanId);
    }
    const [reserve, charge1, charge2, email] = attempts as [
      ReadableSpan,
      ReadableSpan,
      ReadableSpan,
      ReadableSpan,
    ];
    expect(charge1.status.code).toBe(SpanStatusCode.ERROR);
    expect(charge1.status.message).toBe('gateway timeout');
    expect(attrs(charge1)).toMatchObject({ [ATTR.outcome]: 'failed', [ATTR.errorCode]: 'GATEWAY' });
    expect(charge1.events.map((e) => [e.name, e.attributes?.['exception.message']])).toEqual([
      ['exception', 'gateway timeout'],
    ]);
    for (const ok of [reserve, charge2, email]) {
      expect(ok.status.code).toBe(SpanStatusCode.UNSET);
      expect(attrs(ok)[ATTR.outcome]).toBe('completed');
    }
    // A span per event written, the tick of the retry included (parented by the carrier too).
    const events = spans.filter((x) => x.name.startsWith('stepfold.event '));
    expect(events.map((x) => attrs(x)[ATTR.event])).toEqual([
      'start',
      'task.completed',
      'task.failed',
      'tick',
      'task.completed',
      'task.completed',
    ]);
    const last = events.at(-1)!;
    expect(attrs(last)).toMatchObject({ [ATTR.status]: 'completed', [ATTR.versionAfter]: s.version });
    expect(s.trace?.traceparent).toBe(`00-${request.traceId}-${start.spanContext().spanId}-01`);
  });

  it('continues the trace in another runner from the snapshot it loads back (a store round trip)', async () => {
    const clock = { now: 1_000 };
    const seen: Seen = new Map();
    const store = createMemoryStore();
    // An API process that only writes (its handlers are handed off), and a worker that runs them.
    const api = makeRunner(store, seen, clock, { execute: false });
    const worker = makeRunner(store, seen, clock);
    const request = await startInSpan(api, 'order-2');
    expect(seen.size).toBe(0);
    const stored = (await store.load('order-2'))!;
    expect(stored.trace?.traceparent).toMatch(new RegExp(`^00-${request.traceId}-[0-9a-f]{16}-01$`));
    const s = await drive(worker, 'order-2', clock);
    expect(s.status).toBe('completed');
    const spans = exporter.getFinishedSpans();
    expect(new Set(spans.map((x) => x.spanContext().traceId))).toEqual(new Set([request.traceId]));
    const carried = stored.trace!.traceparent!.split('-')[2];
    const attempts = tasks(spans);
    expect(attempts).toHaveLength(4);
    for (const a of attempts) expect(parentId(a)).toBe(carried);
    expect(seen.get('charge#2')).toBe(attempts[2]!.spanContext().spanId);
  });

  it('traces compensation attempts with phase compensate', async () => {
    const clock = { now: 1_000 };
    const seen: Seen = new Map();
    const runner = makeRunner(createMemoryStore(), seen, clock, { email: true });
    const request = await startInSpan(runner, 'order-3');
    const s = await drive(runner, 'order-3', clock);
    expect(s.status).toBe('failed');
    const attempts = tasks(exporter.getFinishedSpans());
    expect(
      attempts.map((x) => `${attrs(x)[ATTR.step]} ${attrs(x)[ATTR.phase]} ${attrs(x)[ATTR.outcome]}`),
    ).toEqual([
      'reserve run completed',
      'charge run failed',
      'charge run completed',
      'email run failed',
      'charge compensate completed',
      'reserve compensate completed',
    ]);
    expect(attempts.every((x) => x.spanContext().traceId === request.traceId)).toBe(true);
    expect(attempts[3]!.status.code).toBe(SpanStatusCode.ERROR);
    expect(seen.get('reserve!1')).toBe(attempts[5]!.spanContext().spanId);
  });

  it('uses a given propagator, and a given tracer', async () => {
    const clock = { now: 1_000 };
    const tracer = provider.getTracer('mine');
    const runner = makeRunner(createMemoryStore(), new Map(), clock, {
      otel: { tracer, propagator: new W3CTraceContextPropagator() },
    });
    const request = await startInSpan(runner, 'order-4');
    const s = await drive(runner, 'order-4', clock);
    expect(s.trace?.traceparent).toContain(request.traceId);
    const spans = exporter.getFinishedSpans().filter((x) => x.name.startsWith('stepfold.'));
    expect(spans.every((x) => x.instrumentationScope.name === 'mine')).toBe(true);
    expect(spans.every((x) => x.spanContext().traceId === request.traceId)).toBe(true);
  });

  it('starts its own trace when the caller has none, and links a signal to the caller’s trace', async () => {
    const clock = { now: 1_000 };
    const runner = makeRunner(createMemoryStore(), new Map(), clock);
    await runner.start('order-saga', 'order-5', {});
    const s = await drive(runner, 'order-5', clock);
    const spans = exporter.getFinishedSpans();
    const start = spans.find((x) => x.name === 'stepfold.event start')!;
    expect(parentId(start)).toBeUndefined(); // a root: the instance's trace begins here
    expect(new Set(spans.map((x) => x.spanContext().traceId)).size).toBe(1);
    expect(s.trace?.traceparent).toContain(start.spanContext().traceId);
    // A call from another trace (a request cancelling it) is recorded in the instance's trace, linked.
    const other = await provider.getTracer('test').startActiveSpan('DELETE /orders', async (span: Span) => {
      await runner.cancel('order-5', 'changed my mind');
      span.end();
      return span.spanContext();
    });
    const cancel = exporter.getFinishedSpans().find((x) => x.name === 'stepfold.event cancel')!;
    expect(cancel.spanContext().traceId).toBe(start.spanContext().traceId);
    expect(cancel.links.map((l) => l.context.spanId)).toEqual([other.spanId]);
    expect(attrs(cancel)[ATTR.applied]).toBe(false); // the order had completed already
  });

  it('sets nothing global: provider, propagator and the rest of the API registry are as they were', async () => {
    const clock = { now: 1_000 };
    const runner = makeRunner(createMemoryStore(), new Map(), clock);
    await startInSpan(runner, 'order-6');
    await drive(runner, 'order-6', clock);
    expect(exporter.getFinishedSpans().length).toBeGreaterThan(0);
    context.disable();
    const after = globals();
    expect(Object.keys(after).sort()).toEqual(Object.keys(before.registry).sort());
    for (const k of Object.keys(after)) expect(after[k as keyof typeof after]).toBe(before.registry[k]);
    expect(trace.getTracerProvider()).toBe(before.provider);
    expect(propagation.fields()).toEqual(before.propagator); // still the API's no-op propagator
  });
});
