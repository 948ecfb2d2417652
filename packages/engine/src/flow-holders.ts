// The holder ids the runner (and a store's delete) gives the store's flow counts for an instance:
// shared by the runner's write path and the stores, so both name the same holders.

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
  const out = new Set<string>();
  for (const t of s.timers) {
    if (t.kind !== 'throttle' || t.attempt === undefined) continue;
    const st = s.steps[t.step];
    if (!st) continue;
    const base = `${s.id}/${s.run}/${t.step}/${st.iteration}`;
    const key = t.item === undefined ? base : `${base}/${t.item}`;
    out.add(
      taskHolder({
        idempotencyKey: key,
        phase: t.phase ?? 'run',
        attempt: t.attempt,
        dispatchVersion: t.dispatchVersion,
      }),
    );
  }
  return out;
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
