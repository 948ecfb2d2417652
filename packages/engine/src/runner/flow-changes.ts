import { MAX_EVENT_TIME } from '../event-time.js';
import type { WorkflowEvent } from '../events.js';
import { attemptOf, counterOf, instanceHolder, taskHolder, waitingNeeds } from '../flow-holders.js';
import type { FlowCounterRef } from '../flow-need.js';
import { taskDue } from '../reducer/task-lease.js';
import { isTerminal, type Snapshot, type TaskState } from '../snapshot.js';
import type { FlowNeed } from '../store/flow.js';

// What a write asks of the store's `flow`, from the snapshot before it and after it: pure, so the
// write loop, the harness and a test all read the same answer.

/** An instance's hold has no lease of its own: it lasts until the runner releases it (the instance ends). */
export const INSTANCE_LEASE = MAX_EVENT_TIME;

/** One holder to acquire before the write is saved. */
export interface FlowAcquire {
  holder: string;
  needs: FlowNeed[];
  /** The lease the store keeps the slots for: the attempt's deadline, or {@link INSTANCE_LEASE}. */
  until: number;
  /** The attempt it is for; absent for the instance's admission. */
  task?: TaskState | undefined;
}

/** A holder whose lease moved, with the counters it holds its slots on. */
export interface FlowRenewal {
  holder: string;
  until: number;
  /** The counters of the attempt's needs: where the store keeps its slots. */
  counters: FlowCounterRef[];
}

/** What one write changes in the store's counts. */
export interface FlowChanges {
  /** Holders this write dispatched (attempts with needs that run now; an admission asked for). */
  acquire: FlowAcquire[];
  /** Holders the write ended: attempts finished, given back or gone while waiting; an instance that ended. */
  release: string[];
  /**
   * The counters the holders of `release` are counted on (each once), as the snapshots before and
   * after name them (what `flowCounters` answers for them); undefined when one of them names
   * none (a throttled attempt of an older release's snapshot): the store then looks everywhere.
   */
  releaseCounters: FlowCounterRef[] | undefined;
  /** Holders whose lease moved (an attempt taken again with a new deadline or lease). */
  renew: FlowRenewal[];
  /**
   * Waiter entries of throttled attempts this write dispatches again (a later version: a new
   * holder, running or waiting): released before the acquire, not after the save, so a release
   * that is lost (a process that dies, a Lambda that freezes) never leaves a waiter behind.
   */
  redispatched: string[];
  /** The counters the waiter entries of `redispatched` are on, as `releaseCounters` is for `release`. */
  redispatchedCounters: FlowCounterRef[] | undefined;
}

/** The lease of an attempt's slots: when the attempt is due (its lease, or its deadline when sooner). */
const leaseOf = taskDue;

/** Attempts that hold (or must acquire) slots: those with needs that run, by holder. Queued ones wait for a taker. */
function running(s: Snapshot | null): Map<string, TaskState> {
  const out = new Map<string, TaskState>();
  if (!s) return out;
  for (const key in s.tasks) {
    const t = s.tasks[key]!;
    if (t.needs !== undefined && !t.queued) out.set(taskHolder(t), t);
  }
  return out;
}

/** Throttled attempts by holder (recorded as waiters in the store until they run or go), each with the need it waits on. */
function waiting(s: Snapshot | null): Map<string, FlowNeed | undefined> {
  return s?.timers.length ? waitingNeeds(s) : new Map();
}

/**
 * Counters gathered each once, in the order first named; `known` false once a holder named none.
 * Kept in an array (a holder names one or two): searched in a set only when it grows.
 */
class Counters {
  readonly list: FlowCounterRef[] = [];
  known = true;
  private index: Set<string> | undefined;

  /** Adds the counters of `needs` (an undefined need: a holder with none known). */
  add(needs: readonly (FlowNeed | undefined)[] | undefined): void {
    if (!needs) return;
    for (const n of needs) {
      if (n === undefined) this.known = false;
      else this.one(n.scope, n.key, n.periodMs ?? 0);
    }
  }

  /** Adds counters named already. */
  addRefs(refs: readonly FlowCounterRef[]): void {
    for (const c of refs) this.one(c.scope, c.key, c.period);
  }

  /** The counters gathered, or undefined when one holder named none. */
  get answer(): FlowCounterRef[] | undefined {
    return this.known ? this.list : undefined;
  }

  private one(scope: string, key: string, period: number): void {
    if (!this.index) {
      for (const c of this.list) if (c.scope === scope && c.key === key && c.period === period) return;
      if (this.list.length < 8) {
        this.list.push({ scope, key, period });
        return;
      }
      this.index = new Set(this.list.map((c) => `${c.scope}\0${c.key}\0${c.period}`));
    }
    const id = `${scope}\0${key}\0${period}`;
    if (this.index.has(id)) return;
    this.index.add(id);
    this.list.push({ scope, key, period });
  }
}

/** The counters of `needs`, each once (where acquired holders are given back). */
export function needCounters(needs: readonly FlowNeed[]): FlowCounterRef[] {
  const out = new Counters();
  out.add(needs);
  return out.list;
}

/** `refs` each once, in the order first named. */
export function uniqueCounters(refs: readonly FlowCounterRef[]): FlowCounterRef[] {
  const out = new Counters();
  out.addRefs(refs);
  return out.list;
}

/**
 * What a write from `prev` (null: a new instance) to `next` asks of the store: acquire for attempts
 * with needs that run in `next` and did not in `prev`, and for an admission `next` asks for;
 * release attempts of `prev` that no longer run or wait, and the instance's hold once `next` has
 * ended; renew attempts whose lease moved. Each holder released, renewed or dispatched again comes
 * with the counters the snapshots name for it (one walk of each snapshot).
 */
export function flowChanges(prev: Snapshot | null, next: Snapshot): FlowChanges {
  return oneEach(prev, next) ?? anyChanges(prev, next);
}

/** What `s` runs with needs, when at most one attempt: null for none, undefined for more. */
function lone(s: Snapshot): TaskState | null | undefined {
  let one: TaskState | null = null;
  for (const key in s.tasks) {
    const t = s.tasks[key]!;
    if (t.needs === undefined || t.queued) continue;
    if (one) return undefined;
    one = t;
  }
  return one;
}

/**
 * {@link flowChanges} of the commonest write, without the maps and sets of the general walk: no
 * timers (so nothing waits), no instance limits, and at most one limited attempt running before
 * and one after (a task's end and the next one's start). Undefined for any other write.
 */
function oneEach(prev: Snapshot | null, next: Snapshot): FlowChanges | undefined {
  if (next.timers.length || next.admission || next.holds) return undefined;
  if (prev && (prev.timers.length || prev.admission || prev.holds)) return undefined;
  const now = lone(next);
  const was = prev ? lone(prev) : null;
  if (now === undefined || was === undefined) return undefined;
  const acquire: FlowAcquire[] = [];
  const release: string[] = [];
  const renew: FlowRenewal[] = [];
  let releaseCounters: FlowCounterRef[] = [];
  const holder = now && taskHolder(now);
  const held = was && taskHolder(was);
  if (now && holder === held) {
    if (leaseOf(was!) !== leaseOf(now))
      renew.push({ holder: holder!, until: leaseOf(now), counters: now.needs!.map(counterOf) });
  } else {
    if (now) acquire.push({ holder: holder!, needs: now.needs!, until: leaseOf(now), task: now });
    if (was) {
      release.push(held!);
      releaseCounters = needCounters(was.needs!);
    }
  }
  return { acquire, release, releaseCounters, renew, redispatched: [], redispatchedCounters: [] };
}

/** {@link flowChanges} of any write: the holders of each snapshot walked into maps (what the short path must agree with). */
export function anyChanges(prev: Snapshot | null, next: Snapshot): FlowChanges {
  const before = running(prev);
  const after = running(next);
  const acquire: FlowAcquire[] = [];
  const release: string[] = [];
  const renew: FlowRenewal[] = [];
  const redispatched: string[] = [];
  const released = new Counters();
  for (const [holder, task] of after) {
    const was = before.get(holder);
    if (!was) acquire.push({ holder, needs: task.needs!, until: leaseOf(task), task });
    else if (leaseOf(was) !== leaseOf(task))
      renew.push({ holder, until: leaseOf(task), counters: task.needs!.map(counterOf) });
  }
  const stillWaiting = waiting(next);
  for (const [holder, was] of before)
    if (!after.has(holder) && !stillWaiting.has(holder)) {
      release.push(holder);
      released.add(was.needs);
    }
  const waited = waiting(prev);
  const again = new Counters();
  if (waited.size) {
    const wanted = new Set([...after.keys(), ...stillWaiting.keys()].map(attemptOf));
    for (const [holder, need] of waited) {
      if (after.has(holder) || stillWaiting.has(holder)) continue;
      const into = wanted.has(attemptOf(holder)) ? again : released;
      (into === again ? redispatched : release).push(holder);
      into.add([need]);
    }
  }
  const instance = instanceHolder(next);
  if (isTerminal(next.status)) {
    if (next.holds || prev?.holds || prev?.admission) {
      release.push(instance);
      // Wherever the instance held or waited, before or after (what it recorded when granted).
      released.add(prev?.holds);
      released.add(prev?.admission?.needs);
      released.add(next.holds);
      released.add(next.admission?.needs);
    }
  } else if (next.admission && !next.admission.throttled) {
    acquire.push({ holder: instance, needs: next.admission.needs, until: INSTANCE_LEASE });
  } else if (next.holds && !prev?.holds) {
    acquire.push({ holder: instance, needs: next.holds, until: INSTANCE_LEASE });
  }
  return {
    acquire,
    release,
    releaseCounters: released.answer,
    renew,
    redispatched,
    redispatchedCounters: again.answer,
  };
}

/** Whether a write may touch the store's counts at all: the cheap test that spares every other write. */
export function touchesFlow(prev: Snapshot | null, next: Snapshot): boolean {
  return limited(next) || (prev !== null && limited(prev));
}

function limited(s: Snapshot): boolean {
  if (s.admission || s.holds) return true;
  for (const key in s.tasks) if (s.tasks[key]!.needs) return true;
  for (const t of s.timers) if (t.kind === 'throttle') return true;
  return false;
}

/**
 * The event that records a refused holder: its attempt (or the admission) waits for `need`, tried
 * again at `until` at the latest (never before `now + 1`: a retry loop must not spin).
 */
export function refusalEvent(a: FlowAcquire, need: FlowNeed, until: number, now: number): WorkflowEvent {
  const at = Math.max(until, now + 1);
  const t = a.task;
  if (!t) return { type: 'instance.throttled', at: now, need, until: at };
  return {
    type: 'task.throttled',
    at: now,
    step: t.step,
    attempt: t.attempt,
    key: t.idempotencyKey,
    need,
    until: at,
    ...(t.phase === 'run' ? {} : { phase: t.phase }),
    ...(t.item === undefined ? {} : { item: t.item }),
  };
}
