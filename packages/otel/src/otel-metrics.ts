import { type Attributes, type Meter, type MeterProvider, metrics, ValueType } from '@opentelemetry/api';
import {
  defineInstrumentation,
  type EventOutcome,
  type RunnerInstrumentation,
  type WorkerEvents,
} from '@stepfold/engine';
import { DURATION_BUCKETS, METER_NAME, METRIC } from './metric-names.js';
import { type MetricsObservation, type ObserveTarget, observer } from './metric-observers.js';
import { ATTR } from './otel-instrumentation.js';

const METER_VERSION = '0.1.0';

/** Options of {@link createOtelMetrics}; nothing is registered globally either way. */
export interface OtelMetricsOptions {
  /** The meter to record with; default: `meterProvider`'s (or the global API's) `@stepfold/otel` meter. */
  meter?: Meter | undefined;
  /** Where the default meter comes from (default: the global API's current provider). */
  meterProvider?: MeterProvider | undefined;
}

/**
 * Stepfold's metrics for one process, made by {@link createOtelMetrics}: an instrumentation for the
 * runner (starts, ends, handler attempts and their durations), observers for a worker (claims,
 * lag), and {@link OtelMetrics.observe} for what is read at each collection (write counts and
 * conflicts, a worker's running and queued runs, the due backlog, flow-control keys).
 */
export interface OtelMetrics {
  /**
   * For `createRunner({ instrument })`; with tracing too, pass this object as
   * `createOtelInstrumentation({ metrics })` instead.
   */
  readonly instrument: RunnerInstrumentation;
  /**
   * For `createWorker({ on })`: records claims and lag, then calls `own`'s observers (every other
   * observer of `own` is passed through as it is).
   */
  workerEvents(own?: Partial<WorkerEvents>): Partial<WorkerEvents>;
  /**
   * Reads a runner's write counters, a worker's runs, the due backlog and the store's flow-control
   * keys whenever the meter collects (a scrape); `close()` stops. Call it for each runner of the
   * process (an API's and a worker's): counters add up over them.
   */
  observe(target: ObserveTarget): MetricsObservation;
}

/** The time for durations: a monotonic clock where the platform has one. */
function monotonicClock(): () => number {
  const perf = (globalThis as { performance?: { now(): number } }).performance;
  return perf ? () => perf.now() : Date.now;
}

/**
 * OpenTelemetry metrics for stepfold through `@opentelemetry/api` only: bring your SDK's
 * `MeterProvider` (or register one globally). Attributes are bounded: workflow names, steps,
 * outcomes, lanes and flow keys, never instance ids. See docs/metrics.md for every name and unit.
 *
 * @example
 * import { createOtelMetrics } from '@stepfold/otel';
 *
 * const metrics = createOtelMetrics({ meterProvider });
 * const runner = createRunner({ store, workflows: [order], handlers, instrument: metrics.instrument });
 * const worker = createWorker({ runner, on: metrics.workerEvents() });
 * metrics.observe({ runner, worker });
 */
export function createOtelMetrics(options: OtelMetricsOptions = {}): OtelMetrics {
  const meter =
    options.meter ??
    (options.meterProvider ?? metrics.getMeterProvider()).getMeter(METER_NAME, METER_VERSION);
  const clock = monotonicClock();
  const count = (name: string, description: string, unit: string) =>
    meter.createCounter(name, { description, unit, valueType: ValueType.INT });
  const seconds = (name: string, description: string) =>
    meter.createHistogram(name, {
      description,
      unit: 's',
      advice: { explicitBucketBoundaries: [...DURATION_BUCKETS] },
    });
  const started = count(METRIC.workflowsStarted, 'Workflow instances started', '{instance}');
  const completed = count(METRIC.workflowsCompleted, 'Workflow instances that completed', '{instance}');
  const failed = count(METRIC.workflowsFailed, 'Workflow instances that failed', '{instance}');
  const cancelled = count(METRIC.workflowsCancelled, 'Workflow instances cancelled or aborted', '{instance}');
  const attempts = count(METRIC.taskAttempts, 'Handler attempts, by outcome', '{attempt}');
  const durationSeconds = seconds(METRIC.taskDuration, 'Duration of each handler attempt');
  const claims = count(METRIC.workerClaims, 'Instances a worker took to tick', '{instance}');
  const lagSeconds = seconds(METRIC.workerLag, 'From an instance falling due to a worker tick of it');

  /** Counts the starts and ends the write recorded: its log entries past the version it was applied to. */
  function transitions(workflow: string, out: EventOutcome): void {
    const log = out.snapshot.log;
    const by: Attributes = { [ATTR.workflowName]: workflow };
    // Newest last: walk back over this write's entries only.
    for (let i = log.length - 1; i >= 0; i--) {
      const e = log[i]!;
      if (e.v <= out.versionBefore) break;
      if (e.type === 'workflow.started') started.add(1, by);
      else if (e.type === 'workflow.completed') completed.add(1, by);
      else if (e.type === 'workflow.failed') failed.add(1, by);
      else if (e.type === 'workflow.cancelled' || e.type === 'workflow.aborted')
        cancelled.add(1, { ...by, [ATTR.status]: e.type.slice('workflow.'.length) });
    }
  }

  const instrument = defineInstrumentation({
    carrier: () => undefined,
    async event(info, write) {
      const out = await write();
      if (out.applied) transitions(info.workflow.name, out);
      return out;
    },
    async task(info, run) {
      const t0 = clock();
      const out = await run();
      const by: Attributes = {
        [ATTR.workflowName]: info.workflow.name,
        [ATTR.step]: info.step,
        [ATTR.phase]: info.phase,
        [ATTR.outcome]: out.outcome,
      };
      attempts.add(1, by);
      durationSeconds.record((clock() - t0) / 1000, by);
      return out;
    },
  });

  return {
    instrument,
    workerEvents(own = {}) {
      return {
        ...own,
        claimed(ids, lane) {
          claims.add(ids.length, { [ATTR.lane]: lane });
          own.claimed?.(ids, lane);
        },
        lag(ms, id, workflow) {
          lagSeconds.record(ms / 1000, { [ATTR.workflowName]: workflow });
          own.lag?.(ms, id, workflow);
        },
      };
    },
    observe: observer(meter),
  };
}
