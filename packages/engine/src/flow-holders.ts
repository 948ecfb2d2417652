// The holder ids the runner (and a store's delete) gives the store's flow counts for an instance:
// shared by the runner's write path and the stores, so both name the same holders.

import type { FlowCounterRef, FlowNeed } from './flow-need.js';
import type { Snapshot, TaskState } from './snapshot.js';

/**
 * The holder id of a task attempt as one version dispatched it: its attempt, and the version it was
 * dispatched (or taken) by. Writers that reduced the same version name the same holder, so only one
 * of them runs it and a loser's give-back keeps what the winner saved; writers of different
 * versions never share one, so a loser's give-back, read before a later writer's save, cannot free
 * the slot that writer runs on. Without a version (a snapshot of an older release) it is the attempt's.
 */
export function taskHolder(
  task: Pick<TaskState, 'idempotencyKey' | 'phase' | 'attempt'> & { dispatchVersion?: number | undefined },
): string {
  const by = task.dispatchVersion === undefined ? '' : `@${task.dispatchVersion}`;
  return `${task.idempotencyKey}#${task.phase}#${task.attempt}${by}`;
}

/** A task holder's attempt (`key#phase#attempt`), without the version that dispatched it. */
export function attemptOf(holder: string): string {
  return holder.replace(/@\d+$/, '');
}

/** The holder id of an instance's admission: the instance id (kept through continue-as-new). */
export function instanceHolder(s: Pick<Snapshot, 'id'>): string {
  return s.id;
}

/** Holders of the throttled attempts of `s`: recorded as waiters in the store until they run or go. */
export function waitingHolders(s: Snapshot): Set<string> {
  return new Set(waitingNeeds(s).keys());
}

/**
 * The throttled attempts of `s` by holder, each with the need it waits on (the counter the store
 * recorded its waiter entry on): the one its timer names, or for a timer of an older release
 * without one, its step's `throttled` when that is the same attempt; else undefined.
 */
export function waitingNeeds(s: Snapshot): Map<string, FlowNeed | undefined> {
  const out = new Map<string, FlowNeed | undefined>();
  for (const t of s.timers) {
    if (t.kind !== 'throttle' || t.attempt === undefined) continue;
    const st = s.steps[t.step];
    if (!st) continue;
    const base = `${s.id}/${s.run}/${t.step}/${st.iteration}`;
    const key = t.item === undefined ? base : `${base}/${t.item}`;
    const shown = st.throttled;
    const need =
      t.need ?? (shown && shown.item === t.item && shown.attempt === t.attempt ? shown.need : undefined);
    out.set(
      taskHolder({
        idempotencyKey: key,
        phase: t.phase ?? 'run',
        attempt: t.attempt,
        dispatchVersion: t.dispatchVersion,
      }),
      need,
    );
  }
  return out;
}

/** A need's counter: its scope, key and period (0 for a concurrency slot). */
export const counterOf = (n: FlowNeed): FlowCounterRef => ({
  scope: n.scope,
  key: n.key,
  period: n.periodMs ?? 0,
});

/**
 * The counters on which the store counts `holders` of the snapshots `from`: the needs of the
 * attempts that run (their slots and starts), the need each throttled attempt waits on, and the
 * instance's holds or admission. What the runner hands `flow.release` and `flow.renew` so that a
 * store looks only there. Undefined when one of `holders` is in none of `from` with a known
 * counter (a throttled attempt of an older release's snapshot): the store then looks everywhere.
 */
export function flowCounters(
  holders: readonly string[],
  ...from: Array<Snapshot | null | undefined>
): FlowCounterRef[] | undefined {
  const want = new Set(holders);
  const found = new Set<string>();
  const out = new Map<string, FlowCounterRef>();
  const add = (holder: string, needs: readonly (FlowNeed | undefined)[] | undefined) => {
    if (!needs || !want.has(holder) || needs.includes(undefined)) return;
    found.add(holder);
    for (const n of needs as readonly FlowNeed[])
      out.set(`${n.scope}\0${n.key}\0${n.periodMs ?? 0}`, counterOf(n));
  };
  for (const s of from) {
    if (!s) continue;
    for (const key in s.tasks) {
      const t = s.tasks[key]!;
      if (t.needs !== undefined && !t.queued) add(taskHolder(t), t.needs);
    }
    if (want.size > found.size) for (const [holder, need] of waitingNeeds(s)) add(holder, [need]);
    add(instanceHolder(s), s.holds);
    add(instanceHolder(s), s.admission?.needs);
  }
  return found.size === want.size ? [...out.values()] : undefined;
}

/**
 * Every holder the store may count for `s`: its attempts with needs that run (not queued), its
 * throttled attempts (waiters), and the instance while it holds or asks for admission. What a
 * delete of the instance releases, so nothing it held outlives it.
 */
export function flowHolders(s: Snapshot): string[] {
  const out = new Set<string>(waitingHolders(s));
  for (const key in s.tasks) {
    const t = s.tasks[key]!;
    if (t.needs !== undefined && !t.queued) out.add(taskHolder(t));
  }
  if (s.holds || s.admission) out.add(instanceHolder(s));
  return [...out];
}
