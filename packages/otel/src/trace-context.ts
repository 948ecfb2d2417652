import {
  type Context,
  createTraceState,
  isSpanContextValid,
  type TextMapGetter,
  type TextMapPropagator,
  type TextMapSetter,
  TraceFlags,
  trace,
} from '@opentelemetry/api';

// The W3C Trace Context header pair, for when neither the options nor the global API name a
// propagator (the API's default propagates nothing, so an instance would lose its trace). Only
// traceparent version 00 is written; a later version is read by its first four fields, as the
// W3C Trace Context recommendation asks of a version-00 reader.

const TRACEPARENT = 'traceparent';
const TRACESTATE = 'tracestate';
const HEADER = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * A minimal W3C Trace Context propagator (`traceparent`, `tracestate`), used when no other one is
 * given or registered.
 */
export const traceContextPropagator: TextMapPropagator = {
  inject(context: Context, carrier: unknown, setter: TextMapSetter): void {
    const span = trace.getSpanContext(context);
    if (!span || !isSpanContextValid(span)) return;
    const flags = (span.traceFlags & TraceFlags.SAMPLED).toString(16).padStart(2, '0');
    setter.set(carrier, TRACEPARENT, `00-${span.traceId}-${span.spanId}-${flags}`);
    const state = span.traceState?.serialize();
    if (state) setter.set(carrier, TRACESTATE, state);
  },
  extract(context: Context, carrier: unknown, getter: TextMapGetter): Context {
    const header = first(getter.get(carrier, TRACEPARENT));
    const m = header === undefined ? null : HEADER.exec(header.trim());
    // Version ff is invalid; version 00 has exactly four fields.
    if (!m || m[1] === 'ff' || (m[1] === '00' && m[5] !== undefined)) return context;
    const state = getter.get(carrier, TRACESTATE);
    const span = {
      traceId: m[2]!,
      spanId: m[3]!,
      traceFlags: Number.parseInt(m[4]!, 16) & TraceFlags.SAMPLED,
      isRemote: true,
      ...(state === undefined
        ? {}
        : { traceState: createTraceState(Array.isArray(state) ? state.join(',') : state) }),
    };
    return isSpanContextValid(span) ? trace.setSpanContext(context, span) : context;
  },
  fields: () => [TRACEPARENT, TRACESTATE],
};

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
