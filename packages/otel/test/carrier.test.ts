import {
  createTraceState,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type TextMapPropagator,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { createMemoryStore, createRunner, workflow } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { createOtelInstrumentation, traceContextPropagator } from '../src/index.js';

// The carrier the runner stores, and the built-in W3C propagator used when none is registered.

const SPAN = {
  traceId: '0af7651916cd43dd8448eb211c80319c',
  spanId: 'b7ad6b7169203331',
  traceFlags: TraceFlags.SAMPLED,
  isRemote: false,
  traceState: createTraceState('rojo=00f067aa0ba902b7,congo=t61rcWkgMzE'),
};
const inSpan = trace.setSpanContext(ROOT_CONTEXT, SPAN);

describe('traceContextPropagator', () => {
  it('writes what the SDK’s W3C propagator writes, and reads it back', () => {
    const ours: Record<string, string> = {};
    const theirs: Record<string, string> = {};
    traceContextPropagator.inject(inSpan, ours, defaultTextMapSetter);
    new W3CTraceContextPropagator().inject(inSpan, theirs, defaultTextMapSetter);
    expect(ours).toEqual(theirs);
    const back = trace.getSpanContext(
      traceContextPropagator.extract(ROOT_CONTEXT, ours, defaultTextMapGetter),
    );
    expect(back).toMatchObject({ traceId: SPAN.traceId, spanId: SPAN.spanId, traceFlags: 1, isRemote: true });
    expect(back?.traceState?.get('congo')).toBe('t61rcWkgMzE');
  });

  it.each([
    ['no header', {}],
    ['garbage', { traceparent: 'not-a-header' }],
    ['version ff', { traceparent: `ff-${SPAN.traceId}-${SPAN.spanId}-01` }],
    ['a zero trace id', { traceparent: `00-${'0'.repeat(32)}-${SPAN.spanId}-01` }],
    ['extra fields on version 00', { traceparent: `00-${SPAN.traceId}-${SPAN.spanId}-01-extra` }],
  ])('ignores %s', (_name, carrier) => {
    expect(traceContextPropagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter)).toBe(ROOT_CONTEXT);
  });

  it('reads a later version by its first four fields', () => {
    const carrier = { traceparent: `01-${SPAN.traceId}-${SPAN.spanId}-01-future` };
    const ctx = traceContextPropagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
    expect(trace.getSpanContext(ctx)?.spanId).toBe(SPAN.spanId);
  });
});

describe('carrier()', () => {
  /** A propagator that writes ten entries, two of which a snapshot could not hold. */
  const noisy: TextMapPropagator = {
    inject(_ctx, carrier, setter) {
      for (let i = 0; i < 8; i++) setter.set(carrier, `k${i}`, 'v');
      setter.set(carrier, 'baggage', 'x'.repeat(600));
      setter.set(carrier, 'k8', 'v');
    },
    extract: (ctx) => ctx,
    fields: () => [],
  };

  it('keeps what fits the engine’s limits, so a start never fails on it', async () => {
    const instrument = createOtelInstrumentation({ propagator: noisy });
    expect(instrument.carrier()).toEqual(
      Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`k${i}`, 'v'])),
    );
    const once = workflow('once', 1).task('a', { handler: 'a' }).build();
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [once],
      handlers: { a: () => 1 },
      instrument,
    });
    const s = await runner.start('once', 'x');
    expect(Object.keys(s.trace!)).toHaveLength(8);
  });

  it('is undefined when there is no active span (nothing to carry)', () => {
    expect(createOtelInstrumentation().carrier()).toBeUndefined();
  });
});
