import {
  type BatchObservableResult,
  diag,
  type Meter,
  type ObservableCounter,
  type ObservableGauge,
  ValueType,
} from '@opentelemetry/api';
import type { FlowKeyState, FlowStore, Runner, Worker } from '@stepfold/engine';
import { METRIC } from './metric-names.js';
import { ATTR } from './otel-instrumentation.js';

// What is read rather than counted: a runner's write counters, a worker's runs, the due backlog and
// the flow-control keys, read each time the meter collects (a Prometheus scrape), so nothing here
// runs between scrapes.

/**
 * Counts the instances due by `now` and not claimed, per workflow name, reading the store: the
 * engine's stores have no such read (a poll claims what it lists), so a store package provides
 * one (`postgresDueBacklog` of `@stepfold/store-postgres`), or you write it. A workflow missing
 * from the answer counts 0.
 */
export type DueBacklog = (query: {
  now: number;
  workflows: readonly string[];
}) => Promise<Readonly<Record<string, number>>>;

/** What {@link OtelMetrics.observe} reads at each collection. */
export interface ObserveTarget {
  /** The runner whose writes are counted; its store's flow-control keys are read, where it has `flow`. */
  runner: Pick<Runner, 'stats' | 'workflows' | 'store'>;
  /** A worker over that runner: its running and queued handler runs. */
  worker?: Pick<Worker, 'stats'> | undefined;
  /** Reads the due backlog per lane (none by default: the gauge is then not reported). */
  backlog?: DueBacklog | undefined;
  /**
   * Most flow-control keys reported (default 100; `false`: none). Keys with holders or waiters are
   * read in scope, then key order at each collection, up to this many: each is a series. Keys are
   * your data (a customer id, say): lower this where they are many.
   */
  flowKeys?: number | false | undefined;
  /** Epoch-ms clock for the backlog's and the flow keys' `now` (default `Date.now`). */
  clock?: (() => number) | undefined;
}

/** A running {@link OtelMetrics.observe}. */
export interface MetricsObservation {
  /** Stops reading; the instruments stay. */
  close(): void;
}

/** The observable instruments, made once per meter. */
interface ObservedInstruments {
  writes: ObservableCounter;
  conflicts: ObservableCounter;
  workerTasks: ObservableGauge;
  backlog: ObservableGauge;
  holders: ObservableGauge;
  waiters: ObservableGauge;
}

/** Makes the observable instruments on `meter`. */
function observeInstruments(meter: Meter): ObservedInstruments {
  const int = { valueType: ValueType.INT };
  return {
    writes: meter.createObservableCounter(METRIC.writes, {
      ...int,
      description: 'Successful writes of a runner (creates and saves)',
      unit: '{write}',
    }),
    conflicts: meter.createObservableCounter(METRIC.writeConflicts, {
      ...int,
      description: 'Writes that lost a race to another writer, re-applied or given up',
      unit: '{conflict}',
    }),
    workerTasks: meter.createObservableGauge(METRIC.workerTasks, {
      ...int,
      description: 'Handler runs of a worker, running or waiting for a slot',
      unit: '{task}',
    }),
    backlog: meter.createObservableGauge(METRIC.dueBacklog, {
      ...int,
      description: 'Instances due and not claimed, per lane',
      unit: '{instance}',
    }),
    holders: meter.createObservableGauge(METRIC.flowHolders, {
      ...int,
      description: 'Holders of a flow-control key: running attempts, or starts in a rate window',
      unit: '{holder}',
    }),
    waiters: meter.createObservableGauge(METRIC.flowWaiters, {
      ...int,
      description: 'Instances waiting for a flow-control key',
      unit: '{instance}',
    }),
  };
}

const FLOW_PAGE = 100;

/**
 * The `observe` of one meter: every target observed is read by one callback at each collection.
 * Counters and worker runs add up over the targets (one process's runners and workers); the
 * backlog and the flow keys are the store's, so a lane's backlog is the largest any reader gave
 * and each flow store is read once.
 */
export function observer(meter: Meter): (target: ObserveTarget) => MetricsObservation {
  const i = observeInstruments(meter);
  const all = [i.writes, i.conflicts, i.workerTasks, i.backlog, i.holders, i.waiters];
  const targets = new Set<ObserveTarget>();
  const warned = new Set<string>();
  /** A read that failed (the store is down) leaves its gauges out of this collection; said once. */
  const failed = (what: string, e: unknown) => {
    if (warned.has(what)) return;
    warned.add(what);
    diag.warn(`@stepfold/otel: reading ${what} for metrics failed: ${String(e)}`);
  };

  const callback = async (r: BatchObservableResult): Promise<void> => {
    let writes = 0;
    const races = new Map<string, number>();
    const runs = { running: 0, queued: 0, workers: 0 };
    const backlog = new Map<string, number>();
    const flows = new Map<FlowStore, { keys: number; now: number }>();
    const reads: Promise<void>[] = [];
    for (const t of targets) {
      const { stats, workflows, store } = t.runner;
      writes += stats.writes;
      for (const [race, n] of Object.entries(stats.lostRaces)) races.set(race, (races.get(race) ?? 0) + n);
      if (t.worker) {
        runs.running += t.worker.stats.running;
        runs.queued += t.worker.stats.queued;
        runs.workers++;
      }
      const now = (t.clock ?? Date.now)();
      if (t.backlog)
        reads.push(
          t.backlog({ now, workflows }).then(
            (counts) => {
              for (const w of workflows) backlog.set(w, Math.max(backlog.get(w) ?? 0, counts[w] ?? 0));
            },
            (e) => failed('the due backlog', e),
          ),
        );
      const keys = t.flowKeys === false ? 0 : (t.flowKeys ?? 100);
      if (store.flow && keys > 0)
        flows.set(store.flow, { keys: Math.max(keys, flows.get(store.flow)?.keys ?? 0), now });
    }
    r.observe(i.writes, writes);
    for (const [race, n] of races) r.observe(i.conflicts, n, { [ATTR.race]: race });
    if (runs.workers > 0) {
      r.observe(i.workerTasks, runs.running, { [ATTR.taskState]: 'running' });
      r.observe(i.workerTasks, runs.queued, { [ATTR.taskState]: 'queued' });
    }
    for (const [flow, { keys, now }] of flows)
      reads.push(
        flowKeys(flow, keys, now).then(
          (states) => {
            for (const k of states) {
              const by = { [ATTR.flowScope]: k.scope, [ATTR.flowKey]: k.key };
              r.observe(i.holders, k.holders.length, by);
              r.observe(i.waiters, k.waiting.length, by);
            }
          },
          (e) => failed('the flow-control keys', e),
        ),
      );
    await Promise.all(reads);
    for (const [lane, n] of backlog) r.observe(i.backlog, n, { [ATTR.lane]: lane });
  };

  return (target) => {
    // An entry of its own: the same target observed twice is two entries, closed one by one.
    const entry = { ...target };
    if (targets.size === 0) meter.addBatchObservableCallback(callback, all);
    targets.add(entry);
    return {
      close() {
        if (!targets.delete(entry)) return;
        if (targets.size === 0) meter.removeBatchObservableCallback(callback, all);
      },
    };
  };
}

/** The first `max` keys with holders or waiters, in scope then key order. */
async function flowKeys(flow: FlowStore, max: number, now: number): Promise<FlowKeyState[]> {
  const out: FlowKeyState[] = [];
  let cursor: string | null = null;
  do {
    const page = await flow.list({ limit: Math.min(FLOW_PAGE, max - out.length), cursor, now });
    out.push(...page.items.slice(0, max - out.length));
    cursor = page.cursor;
  } while (cursor !== null && out.length < max);
  return out;
}
