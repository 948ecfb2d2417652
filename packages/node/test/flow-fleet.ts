import type { Store } from '@stepfold/engine';
import type { TestStore } from './support/test-stores.js';
import { type WorkerProcess, workerSet } from './support/worker-process.js';

// What the flow-control tests across worker processes share: worker processes of
// fixtures/flow-worker.mjs over one store of support/test-stores.ts that can be SIGKILLed and
// started again, and the ledger their handlers report to.

/** One handler report: an attempt of instance `id` began or ended, at `at` (epoch ms) in process `pid`. */
export interface RunEntry {
  ledger: 'start' | 'end';
  id: string;
  /** The customer or tenant of the instance's input. */
  key: string;
  /** The attempt's holder id in the store's flow, without the version that dispatched it (`key#phase#attempt`). */
  holder: string;
  attempt: number;
  at: number;
  pid: number;
}

/** The store granted `holder` its needs at `at` (the time it counts a rate start at). */
export interface GrantEntry {
  ledger: 'grant';
  holder: string;
  at: number;
}

/** What the ledger holds: handler runs' starts and ends, and the store's grants. */
export type LedgerEntry = RunEntry | GrantEntry;

/** How the worker processes are set up. */
export interface FleetOptions {
  store: TestStore;
  workers: number;
  /** Each worker's concurrency. */
  slots: number;
  /** The runners' taskLeaseMs. */
  leaseMs: number;
  /** How long each handler works. */
  workMs: number;
}

/** Worker processes over one store, their handlers' ledger and the kills made to them. */
export interface FlowFleet {
  readonly ledger: LedgerEntry[];
  readonly kills: Array<{ pid: number; at: number }>;
  /**
   * SIGKILLs a worker that is up, chosen at random (recorded with the time), and starts another in
   * its place `downMs` later, in the background; false when none is up but one (never the last).
   */
  killOne(downMs: number): boolean;
  /** Drains every worker still up. */
  stop(): Promise<void>;
}

const WORKER = new URL('./fixtures/flow-worker.mjs', import.meta.url);

/** Starts `o.workers` worker processes and resolves once each has polled its store. */
export async function startFlowFleet(o: FleetOptions): Promise<FlowFleet> {
  const ledger: LedgerEntry[] = [];
  const kills: Array<{ pid: number; at: number }> = [];
  const workers = workerSet();
  const spawn = async (): Promise<WorkerProcess> => {
    const child = workers.fork(WORKER, {
      FLOW_STORE: o.store.name,
      FLOW_URL: o.store.url,
      FLOW_NS: o.store.namespace,
      FLOW_LEASE_MS: String(o.leaseMs),
      FLOW_SLOTS: String(o.slots),
      FLOW_WORK_MS: String(o.workMs),
    });
    child.each<LedgerEntry>('ledger', (m) => ledger.push(m));
    await child.next('ready');
    return child;
  };
  const children: Array<WorkerProcess | undefined> = await Promise.all(
    Array.from({ length: o.workers }, spawn),
  );
  const restarts = new Set<Promise<void>>();
  return {
    ledger,
    kills,
    killOne(downMs) {
      const up = children.flatMap((c, i) => (c ? [i] : []));
      if (up.length < 2) return false;
      const i = up[Math.floor(Math.random() * up.length)]!;
      const child = children[i]!;
      children[i] = undefined;
      const killed = child.kill();
      kills.push({ pid: child.pid, at: Date.now() });
      const restart = (async () => {
        await killed;
        await new Promise((r) => setTimeout(r, downMs));
        children[i] = await spawn();
      })();
      restarts.add(restart);
      void restart.finally(() => restarts.delete(restart));
      return true;
    },
    async stop() {
      await Promise.allSettled([...restarts]);
      await workers.stopAll();
    },
  };
}

/** One handler run: from its start to its end, or to the kill of its process when it never ended. */
export interface Run {
  id: string;
  key: string;
  attempt: number;
  pid: number;
  start: number;
  end: number;
  /** Ended by the kill of its process (its end is the kill's time). */
  killed: boolean;
}

/**
 * The handler runs of `ledger`, each closed at its end report or else at the kill of its process
 * (a run neither ended nor killed is still going: open until now).
 */
export function runsOf(
  ledger: readonly LedgerEntry[],
  kills: ReadonlyArray<{ pid: number; at: number }>,
): Run[] {
  const runs = new Map<string, Run>();
  const killedAt = new Map(kills.map((k) => [k.pid, k.at]));
  for (const e of ledger) {
    if (e.ledger === 'grant') continue;
    const name = `${e.id}#${e.attempt}#${e.pid}`;
    if (e.ledger === 'start') {
      const end = killedAt.get(e.pid);
      runs.set(name, { ...e, start: e.at, end: end ?? Date.now(), killed: end !== undefined });
    } else {
      const run = runs.get(name);
      if (run) Object.assign(run, { end: e.at, killed: false });
    }
  }
  return [...runs.values()];
}

/** The first grant of each holder in `ledger`: the start a rate counted for it. */
export function grantTimes(ledger: readonly LedgerEntry[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of ledger) if (e.ledger === 'grant' && !out.has(e.holder)) out.set(e.holder, e.at);
  return out;
}

/**
 * A holder's attempt (`key#phase#attempt`, what a handler knows): writers of different versions
 * that raced to run one attempt were each granted under their own holder, the attempt and its
 * dispatching version.
 */
export const attemptOf = (holder: string) => holder.replace(/@\d+$/, '');

/** The handler starts in `ledger`. */
export function startsOf(ledger: readonly LedgerEntry[]): RunEntry[] {
  return ledger.filter((e): e is RunEntry => e.ledger === 'start');
}

/** Pairs of runs of one key that overlapped in time (a run starting before an earlier one of its key ended). */
export function overlaps(runs: readonly Run[]): Array<[Run, Run]> {
  const byKey = new Map<string, Run[]>();
  for (const r of runs) byKey.set(r.key, [...(byKey.get(r.key) ?? []), r]);
  const out: Array<[Run, Run]> = [];
  for (const list of byKey.values()) {
    list.sort((a, b) => a.start - b.start);
    let latest: Run | undefined;
    for (const r of list) {
      if (latest && r.start < latest.end) out.push([latest, r]);
      if (!latest || r.end > latest.end) latest = r;
    }
  }
  return out;
}

/** The most of `times` (epoch ms) that fall in any window [t, t + periodMs). */
export function busiestWindow(times: readonly number[], periodMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= periodMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/** Resolves once `count` instances of `workflow` are completed in `store`, else rejects after `timeoutMs`. */
export async function allCompleted(
  store: Store,
  workflow: string,
  count: number,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let done = 0;
  while (Date.now() < deadline) {
    done = 0;
    let cursor: string | null = null;
    do {
      const page = await store.list({ status: 'completed', workflow, limit: 500, cursor });
      done += page.items.length;
      cursor = page.cursor;
    } while (cursor !== null);
    if (done >= count) return;
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`${done} of ${count} ${workflow} instances completed within ${timeoutMs} ms`);
}

/** Runs `start(i)` for i in 0..count-1, `width` at a time. */
export async function inBatches(
  count: number,
  width: number,
  start: (i: number) => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < count; i += width)
    await Promise.all(Array.from({ length: Math.min(width, count - i) }, (_, k) => start(i + k)));
}
