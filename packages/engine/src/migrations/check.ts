import { kindOf } from '../definition/kinds/index.js';
import type { StepKind } from '../definition/schema.js';
import { type Migration, versionName } from './define.js';
import {
  activeReasons,
  completedReasons,
  handlerOf,
  PASSING_KINDS,
  possibleTimers,
  rollbackReasons,
  taskReasons,
  timerReasons,
} from './rules.js';

/** Where one old step goes, and why an instance in each state of it could not move (empty: it moves). */
export interface StepMigrationReport {
  step: string;
  kind: StepKind;
  /** Its id in the new version, or null: removed. */
  to: string | null;
  toKind?: StepKind | undefined;
  /** An instance whose cursor is on it (running, waiting, sleeping, parked); null: no instance sits in such a step. */
  active: string[] | null;
  /** An instance with one of its tasks (or compensations) in flight; null: it runs no handler. */
  inFlight: string[] | null;
  /** An instance with one of its timers pending (retry, sleep, timeout, collect windows); null: it has none. */
  timers: string[] | null;
  /** An instance in which it completed (it could be rolled back later). */
  completed: string[];
  /** An instance rolling back with it still to compensate; null: it has no compensation. */
  rollback: string[] | null;
}

/** The static compatibility report of a migration: every problem, before any instance moves. */
export interface MigrationReport {
  from: { name: string; version: number };
  to: { name: string; version: number };
  steps: StepMigrationReport[];
  /** New steps no old step maps onto: instances past their place never run them. */
  added: string[];
  /** What changes for instances that do move (compensations, pivots), for a human to read. */
  notes: string[];
  /** Why an instance holding a buffered signal would be refused: names v1 takes and v2 does not. */
  signals: string[];
  /** Every distinct reason an instance could be refused, across all steps, states and signals. */
  reasons: string[];
  /** No state of any step is refused: every instance of the old version can move. */
  ok: boolean;
}

const uniq = (xs: string[]) => [...new Set(xs)];

/**
 * The static compatibility check between the two versions of a migration: for every old step,
 * where it goes and whether an instance sitting in it, with a task in flight, with a timer, past
 * it, or rolling it back could move, with the reasons when not. Pure; reads no instance.
 *
 * @example
 * const report = checkMigration(toV2);
 * if (!report.ok) console.log(report.reasons.join('\n'));
 */
export function checkMigration(m: Migration): MigrationReport {
  const v = versionName(m.to);
  const notes: string[] = [];
  const steps = Object.values(m.from.definition.steps).map((from): StepMigrationReport => {
    const toId = m.steps[from.id] ?? null;
    const to = toId === null ? undefined : m.to.definition.steps[toId];
    const handlers = (['run', 'compensate'] as const).flatMap((phase) => {
      const h = handlerOf(from, phase);
      return h === undefined ? [] : [{ phase, h }];
    });
    const timers = possibleTimers(from);
    const comp = kindOf(from).compensator?.(from);
    if (to && toId !== null) {
      if (toId !== from.id) notes.push(`step "${from.id}" is "${toId}" in ${v}`);
      const next = kindOf(to).compensator?.(to);
      if (comp !== next)
        notes.push(
          `completed step "${from.id}" is compensated by ${next ?? 'nothing'} in ${v} (was ${comp ?? 'nothing'})`,
        );
      const pivot = kindOf(from).pivot?.(from) === true;
      if (pivot !== (kindOf(to).pivot?.(to) === true))
        notes.push(`step "${from.id}" ${pivot ? 'is no longer' : 'becomes'} a pivot in ${v}`);
    } else notes.push(`step "${from.id}" is removed in ${v}`);
    return {
      step: from.id,
      kind: from.kind,
      to: toId,
      ...(to ? { toKind: to.kind } : {}),
      active: PASSING_KINDS.has(from.kind) ? null : activeReasons(m, from.id),
      inFlight: handlers.length
        ? uniq(handlers.flatMap(({ phase, h }) => taskReasons(m, from.id, phase, h)))
        : null,
      timers: timers.length ? uniq(timers.flatMap((t) => timerReasons(m, from.id, t))) : null,
      completed: completedReasons(m, from.id),
      rollback: comp === undefined ? null : rollbackReasons(m, from.id),
    };
  });
  for (const id of m.added) notes.push(`step "${id}" is new in ${v}`);
  // A signal v1 buffers that v2 refuses (unless the recipe renames it): the instance holding it cannot move.
  const signals =
    m.to.definition.acceptUnknownSignals === true
      ? []
      : [...m.from.signals]
          .filter((name) => !m.to.signals.has(name))
          .map((name) => `pending signal "${name}" is not accepted by ${v}`);
  const reasons = uniq(
    steps.flatMap((s) => [
      ...(s.active ?? []),
      ...(s.inFlight ?? []),
      ...(s.timers ?? []),
      ...s.completed,
      ...(s.rollback ?? []),
    ]),
  ).concat(signals);
  const { name, version } = m.from.definition;
  return {
    from: { name, version },
    to: { name: m.to.definition.name, version: m.to.definition.version },
    steps,
    added: [...m.added],
    notes,
    signals,
    reasons,
    ok: reasons.length === 0,
  };
}
