import { type DiagLogger, DiagLogLevel, diag, type Span, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { composition, createMemoryStore, createRunner, isTerminal, workflow } from '@stepfold/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { ATTR, createOtelInstrumentation } from '../src/index.js';

// No context manager is registered in this file (vitest runs each file in its own worker): the
// API's default one, where `context.with` carries nothing and `context.active()` is always the
// root context. What a user gets before registering one.

const flow = workflow('flow', 1).task('a', { handler: 'a' }).task('b', { handler: 'b' }).build();

const warnings: string[] = [];
const logger: DiagLogger = {
  error: () => {},
  warn: (m: string) => warnings.push(m),
  info: () => {},
  debug: () => {},
  verbose: () => {},
};

afterEach(() => {
  diag.disable();
  warnings.length = 0;
});

describe('without a context manager', () => {
  it('keeps every span of an instance in one trace (the carrier names the start’s span) and warns once', async () => {
    diag.setLogger(logger, DiagLogLevel.WARN);
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const store = createMemoryStore();
    const instrument = createOtelInstrumentation({ tracerProvider: provider });
    const api = createRunner({ kinds: [composition], store, workflows: [flow], execute: false, instrument });
    const worker = createRunner({
      kinds: [composition],
      store,
      workflows: [flow],
      handlers: { a: () => 1, b: () => 2 },
      instrument: createOtelInstrumentation({ tracerProvider: provider }),
    });
    const request = await provider.getTracer('app').startActiveSpan('POST /flows', async (span: Span) => {
      await api.start('flow', 'f-1');
      await api.start('flow', 'f-2');
      span.end();
      return span.spanContext();
    });
    expect(trace.getActiveSpan()).toBeUndefined();
    for (const id of ['f-1', 'f-2']) {
      for (let s = await store.load(id); s && !isTerminal(s.status); s = await store.load(id))
        await worker.processDue(Date.now() + 60_000);
    }
    const spans = exporter.getFinishedSpans().filter((s) => s.name.startsWith('stepfold.'));
    for (const id of ['f-1', 'f-2']) {
      const stored = (await store.load(id))!;
      expect(stored.status).toBe('completed');
      const mine = spans.filter((s) => s.attributes['stepfold.instance.id'] === id);
      const start = mine.find((s) => s.name === 'stepfold.event start')!;
      // The request's span is not seen (nothing made it active), so the start is a root...
      expect(start.parentSpanContext).toBeUndefined();
      expect(start.spanContext().traceId).not.toBe(request.traceId);
      // ...but the carrier names it, and every later span of the instance joins its trace.
      expect(stored.trace?.traceparent).toBe(
        `00-${start.spanContext().traceId}-${start.spanContext().spanId}-01`,
      );
      expect(mine.map((s) => s.name)).toEqual(
        expect.arrayContaining(['stepfold.task a', 'stepfold.task b', 'stepfold.event task.completed']),
      );
      expect(new Set(mine.map((s) => s.spanContext().traceId))).toEqual(
        new Set([start.spanContext().traceId]),
      );
    }
    expect(warnings).toHaveLength(2); // once per instrumentation
    expect(warnings[0]).toContain('no OpenTelemetry context manager is registered');
    await provider.shutdown();
  });

  it("still nests a child's spans under its own start, and that under the parent's start (the carrier)", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const parentFlow = workflow('parent', 1).child('sub', { workflow: flow }).build();
    const runner = createRunner({
      kinds: [composition],
      store: createMemoryStore(),
      workflows: [parentFlow, flow],
      handlers: { a: () => 1, b: () => 2 },
      instrument: createOtelInstrumentation({ tracerProvider: provider }),
    });
    expect((await runner.start('parent', 'p-1')).status).toBe('completed');
    const spans = exporter.getFinishedSpans();
    const start = (id: string) =>
      spans.find((s) => s.name === 'stepfold.event start' && s.attributes[ATTR.instanceId] === id)!;
    const child = start('p-1/1/sub/1');
    expect(child.parentSpanContext?.spanId).toBe(start('p-1').spanContext().spanId);
    const rest = spans.filter((s) => s.attributes[ATTR.instanceId] === 'p-1/1/sub/1' && s !== child);
    expect(rest.length).toBeGreaterThan(0);
    for (const s of rest) expect(s.parentSpanContext?.spanId, s.name).toBe(child.spanContext().spanId);
    await provider.shutdown();
  });
});
