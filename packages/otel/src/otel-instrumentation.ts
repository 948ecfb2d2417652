import {
  type Attributes,
  type Context,
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  diag,
  type Link,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapPropagator,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import {
  defineInstrumentation,
  type EventInfo,
  type EventOutcome,
  type FlowNeed,
  type Instrumentation,
  type RunnerInstrumentation,
  type TaskInfo,
  type TaskOutcome,
} from '@stepfold/engine';
import type { OtelMetrics } from './otel-metrics.js';
import { traceContextPropagator } from './trace-context.js';

/** Options of {@link createOtelInstrumentation}; nothing is registered globally either way. */
export interface OtelInstrumentationOptions {
  /** The tracer to record with; default: `tracerProvider`'s (or the global API's) `@stepfold/otel` tracer. */
  tracer?: Tracer | undefined;
  /** Where the default tracer comes from (default: the global API's current provider). */
  tracerProvider?: TracerProvider | undefined;
  /**
   * How `snapshot.trace` is written and read (default: the global API's propagator, or W3C
   * traceparent/tracestate when none is registered, since the API's default carries nothing).
   */
  propagator?: TextMapPropagator | undefined;
  /** Metrics to record as well (`createOtelMetrics()`): one instrumentation gives the runner spans and metrics. */
  metrics?: Pick<OtelMetrics, 'instrument'> | undefined;
}

/** The instrumentation scope name spans are recorded under. */
export const TRACER_NAME = '@stepfold/otel';
const TRACER_VERSION = '0.1.0';

/** Attribute names of stepfold spans (and, a few of them, of its metrics). */
export const ATTR = {
  instanceId: 'stepfold.instance.id',
  workflowName: 'stepfold.workflow.name',
  workflowVersion: 'stepfold.workflow.version',
  step: 'stepfold.step',
  handler: 'stepfold.handler',
  attempt: 'stepfold.attempt',
  idempotencyKey: 'stepfold.idempotency_key',
  phase: 'stepfold.phase',
  outcome: 'stepfold.outcome',
  errorCode: 'stepfold.error.code',
  event: 'stepfold.event.type',
  applied: 'stepfold.event.applied',
  versionBefore: 'stepfold.snapshot.version_before',
  versionAfter: 'stepfold.snapshot.version',
  status: 'stepfold.status',
  parentId: 'stepfold.parent.id',
  parentStep: 'stepfold.parent.step',
  parentItem: 'stepfold.parent.item',
  /** A limited attempt's flow scopes, one per limit it needs (as `flowKey` and `flowLimit`, in order). */
  flowScope: 'stepfold.flow.scope',
  /** A limited attempt's flow key values, one per limit. */
  flowKey: 'stepfold.flow.key',
  /** A limited attempt's limits, one per limit. */
  flowLimit: 'stepfold.flow.limit',
  /** A rate limit's window (ms), on a `stepfold.throttled` span event. */
  flowPeriod: 'stepfold.flow.period_ms',
  /** Until when a throttled attempt (or admission) waits at the latest (epoch ms), on a `stepfold.throttled` span event. */
  flowUntil: 'stepfold.flow.until',
  /** Metrics: a worker's lane (a workflow name, `*` for instances taken by name or a single lane). */
  lane: 'stepfold.lane',
  /** Metrics: what a write that lost a race wrote (`take`, `sent`, an event type, `@claim` added from a claim). */
  race: 'stepfold.race',
  /** Metrics: a worker's handler runs, `running` or `queued`. */
  taskState: 'stepfold.task.state',
} as const;

/** The span event an event span records for each attempt (or admission) its write left waiting for a limit. */
export const THROTTLED_EVENT = 'stepfold.throttled';

// A carrier the engine stores must be small (≤ 8 entries, each ≤ 512 characters): entries past
// that (a long baggage header, say) are left out rather than failing the start.
const MAX_ENTRIES = 8;
const MAX_LENGTH = 512;

/**
 * A {@link RunnerInstrumentation} for `createRunner({ instrument })` built on `@opentelemetry/api`: a
 * span per handler attempt (`stepfold.task <step>`) and per event written (`stepfold.event <type>`),
 * both parented on the trace the instance carries in `snapshot.trace` (its start's span), so one
 * trace runs from the start to the last handler, in whichever process each step runs. A child
 * workflow's start span sits under the parent's span that started it (else the parent's start) and
 * the child's own spans under that: one branch per child. The handler runs with its attempt's span
 * active. Sets nothing global.
 *
 * @example
 * import { createOtelInstrumentation } from '@stepfold/otel';
 *
 * const runner = createRunner({ store, workflows: [order], handlers, instrument: createOtelInstrumentation() });
 * await tracer.startActiveSpan('POST /orders', async (span) => {
 *   await runner.client(order).start('order-42', input); // every span of order-42 joins this trace
 *   span.end();
 * });
 */
export function createOtelInstrumentation(options: OtelInstrumentationOptions = {}): RunnerInstrumentation {
  // The global API hands out a proxy tracer that follows whatever provider is registered later.
  const tracer =
    options.tracer ??
    (options.tracerProvider ?? trace.getTracerProvider()).getTracer(TRACER_NAME, TRACER_VERSION);
  /** The given propagator, else the global one at call time, else W3C trace context. */
  const propagator = (): TextMapPropagator =>
    options.propagator ?? (propagation.fields().length ? propagation : traceContextPropagator);

  /**
   * The parent of a span about to start, and a link to the caller's span when that is another trace.
   * `nearest`: the active span when it is in the carrier's trace (a child's start, under the
   * parent's span that starts it), else the carrier's.
   */
  function parentOf(
    carrier: Readonly<Record<string, string>> | undefined,
    nearest = false,
  ): {
    parent: Context;
    links: Link[];
  } {
    const active = context.active();
    if (!carrier) return { parent: active, links: [] };
    const parent = propagator().extract(active, carrier, defaultTextMapGetter);
    const caller = trace.getSpanContext(active);
    const own = trace.getSpanContext(parent);
    const valid = caller !== undefined && trace.isSpanContextValid(caller);
    if (nearest && valid && caller.traceId === own?.traceId) return { parent: active, links: [] };
    const foreign = valid && caller.traceId !== own?.traceId;
    return { parent, links: foreign ? [{ context: caller }] : [] };
  }

  // The context of the event span whose `write` is being called, while that call runs synchronously.
  // The runner asks for a start's carrier synchronously inside `write`, so `carrier()` names the
  // start's span from here even when no context manager carries `context.with` into the call (the
  // API's default manager does not: there `context.active()` is always ROOT_CONTEXT).
  let calling: Context | undefined;
  let warned = false;

  /** Runs `work` with `span` active under `parent`, ending the span however it settles. */
  async function within<T>(span: Span, parent: Context, work: () => Promise<T>): Promise<T> {
    const active = trace.setSpan(parent, span);
    const outer = calling;
    calling = active;
    let pending: Promise<T>;
    try {
      pending = context.with(active, () => {
        if (!warned && context.active() !== active) noContextManager();
        return work();
      });
    } catch (e) {
      pending = Promise.reject(e);
    } finally {
      calling = outer;
    }
    try {
      return await pending;
    } catch (e) {
      // The runner's own failure (a store outage, a conflict it gave up on): not a handler error.
      span.recordException(e instanceof Error ? e : String(e));
      span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
      throw e;
    } finally {
      span.end();
    }
  }

  /** Says once, through the API's diag logger, what a missing context manager costs. */
  function noContextManager(): void {
    warned = true;
    diag.warn(
      '@stepfold/otel: no OpenTelemetry context manager is registered, so the span active where ' +
        'runner.start is called is not seen (each instance starts its own trace) and handlers see no ' +
        'active span. Register one: NodeTracerProvider#register(), NodeSDK#start(), or ' +
        'context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()).',
    );
  }

  const tracing: Instrumentation = {
    carrier() {
      const out: Record<string, string> = {};
      propagator().inject(calling ?? context.active(), out, defaultTextMapSetter);
      return fit(out);
    },

    async event(info: EventInfo, write) {
      // A child's start: its span is the child's (the carrier it stores), placed under its parent's.
      const { parent, links } = parentOf(info.trace, info.parent !== undefined);
      const attributes: Attributes = {
        ...instance(info),
        [ATTR.event]: info.type,
        ...parentAttributes(info),
      };
      const span = tracer.startSpan(
        `stepfold.event ${info.type}`,
        { kind: SpanKind.INTERNAL, attributes, links },
        parent,
      );
      return within(span, parent, async () => {
        const out = await write();
        span.setAttributes({
          [ATTR.applied]: out.applied,
          [ATTR.versionBefore]: out.versionBefore,
          [ATTR.versionAfter]: out.snapshot.version,
          [ATTR.status]: out.snapshot.status,
        });
        if (out.applied) throttles(span, out);
        return out;
      });
    },

    async task(info: TaskInfo, run) {
      const { parent, links } = parentOf(info.trace);
      const attributes: Attributes = {
        ...instance(info),
        [ATTR.step]: info.step,
        [ATTR.phase]: info.phase,
        [ATTR.handler]: info.handler,
        [ATTR.attempt]: info.attempt,
        [ATTR.idempotencyKey]: info.idempotencyKey,
        ...flowAttributes(info.needs),
      };
      // CONSUMER: the attempt picks up work a durable snapshot handed out, often in another process.
      const span = tracer.startSpan(
        `stepfold.task ${info.step}`,
        { kind: SpanKind.CONSUMER, attributes, links },
        parent,
      );
      return within(span, parent, async () => {
        const out = await run();
        outcome(span, out);
        return out;
      });
    },
  };
  return defineInstrumentation(options.metrics ? inside(tracing, options.metrics.instrument) : tracing);
}

/** `outer`'s hooks around `inner`'s: the spans hold the metrics' work, the carrier is `outer`'s. */
function inside(outer: Instrumentation, inner: Instrumentation): Instrumentation {
  return {
    carrier: () => outer.carrier(),
    event: (info, write) => outer.event(info, () => inner.event(info, write)),
    task: (info, run) => outer.task(info, () => inner.task(info, run)),
  };
}

function instance(info: EventInfo | TaskInfo): Attributes {
  return {
    [ATTR.instanceId]: info.instanceId,
    [ATTR.workflowName]: info.workflow.name,
    [ATTR.workflowVersion]: info.workflow.version,
  };
}

/** A limited attempt's flow limits: the scope, key and limit of each, in the order it needs them. */
function flowAttributes(needs: readonly FlowNeed[] | undefined): Attributes {
  if (!needs?.length) return {};
  return {
    [ATTR.flowScope]: needs.map((n) => n.scope),
    [ATTR.flowKey]: needs.map((n) => n.key),
    [ATTR.flowLimit]: needs.map((n) => n.limit),
  };
}

/**
 * A {@link THROTTLED_EVENT} for each attempt (or admission) the write left waiting: what it waits
 * for (scope, key, limit, a rate's window) and until when at the latest, read from the transitions
 * the write recorded and the waits the snapshot shows.
 */
function throttles(span: Span, out: EventOutcome): void {
  const s = out.snapshot;
  for (const e of s.log) {
    if (e.v <= out.versionBefore) continue;
    const wait =
      e.type === 'task.throttled' && e.step !== undefined
        ? s.steps[e.step]?.throttled
        : e.type === 'instance.throttled'
          ? s.admission?.throttled
          : undefined;
    if (!wait) continue;
    const { need, until } = wait;
    span.addEvent(THROTTLED_EVENT, {
      ...(e.step === undefined ? {} : { [ATTR.step]: e.step }),
      ...(e.attempt === undefined ? {} : { [ATTR.attempt]: e.attempt }),
      [ATTR.flowScope]: need.scope,
      [ATTR.flowKey]: need.key,
      [ATTR.flowLimit]: need.limit,
      ...(need.periodMs === undefined ? {} : { [ATTR.flowPeriod]: need.periodMs }),
      [ATTR.flowUntil]: until,
    });
  }
}

/** A child's start names its parent, and the step (and map item) that started it. */
function parentAttributes(info: EventInfo): Attributes {
  const p = info.parent;
  if (!p) return {};
  return {
    [ATTR.parentId]: p.id,
    [ATTR.parentStep]: p.step,
    ...(p.item === undefined ? {} : { [ATTR.parentItem]: p.item }),
  };
}

/** Records how an attempt ended: a failed one is an ERROR span with the exception the handler threw. */
function outcome(span: Span, out: TaskOutcome): void {
  span.setAttribute(ATTR.outcome, out.outcome);
  if (out.outcome !== 'failed') return;
  const { error, cause } = out;
  if (error.code !== undefined) span.setAttribute(ATTR.errorCode, error.code);
  span.recordException(
    cause instanceof Error ? cause : { name: error.code ?? 'Error', message: error.message },
  );
  span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
}

/** The carrier cut to what a snapshot may hold; undefined when nothing is left to carry. */
function fit(carrier: Record<string, string>): Record<string, string> | undefined {
  const kept = Object.entries(carrier)
    .filter(
      ([k, v]) => typeof v === 'string' && k.length > 0 && k.length <= MAX_LENGTH && v.length <= MAX_LENGTH,
    )
    .slice(0, MAX_ENTRIES);
  // fromEntries defines keys as own data properties, so even a `__proto__` key stays a plain entry.
  return kept.length ? Object.fromEntries(kept) : undefined;
}
