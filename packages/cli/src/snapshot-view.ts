import type { Snapshot } from '@stepfold/engine';
import { brief, isoTime, table } from './output.js';

/** One line of `list`: who the instance is and where it stands. */
export interface InstanceRow {
  id: string;
  workflow: string;
  workflowVersion: number;
  status: string;
  version: number;
  active: string[];
  wakeAt: number | null;
  updatedAt: number;
}

/** The `list` row of a snapshot. */
export function instanceRow(s: Snapshot): InstanceRow {
  return {
    id: s.id,
    workflow: s.workflow.name,
    workflowVersion: s.workflow.version,
    status: s.status,
    version: s.version,
    active: [...s.active],
    wakeAt: s.wakeAt,
    updatedAt: s.updatedAt,
  };
}

/** `list` rows as a table. */
export function renderRows(rows: readonly InstanceRow[]): string[] {
  return table([
    ['ID', 'WORKFLOW', 'STATUS', 'VERSION', 'ACTIVE', 'WAKE AT', 'UPDATED'],
    ...rows.map((r) => [
      r.id,
      `${r.workflow}@${r.workflowVersion}`,
      r.status,
      String(r.version),
      r.active.join(',') || '-',
      isoTime(r.wakeAt),
      isoTime(r.updatedAt),
    ]),
  ]);
}

/** What `show` reports of a snapshot, as JSON: the state without the bookkeeping. */
export function summarize(s: Snapshot) {
  return {
    id: s.id,
    workflow: s.workflow,
    status: s.status,
    version: s.version,
    run: s.run,
    input: s.input,
    ...(s.output !== undefined ? { output: s.output } : {}),
    ...(s.error ? { error: s.error } : {}),
    ...(s.compensationError ? { compensationError: s.compensationError } : {}),
    ...(s.reason !== undefined ? { reason: s.reason } : {}),
    steps: s.steps,
    active: s.active,
    tasks: Object.values(s.tasks),
    timers: s.timers,
    inbox: s.inbox,
    ...(s.saga ? { saga: s.saga } : {}),
    wakeAt: s.wakeAt,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    log: s.log,
  };
}

/** The headline of a snapshot: id, workflow, status, version. */
export function headline(s: Snapshot): string {
  return `${s.id}  ${s.workflow.name}@${s.workflow.version}  ${s.status}  v${s.version}`;
}

/**
 * A snapshot for people: status, steps, in-flight tasks, timers, inbox, error, transition log;
 * `extra` lines (what it can take now) go after the headline block, before the steps.
 */
export function renderSnapshot(s: Snapshot, extra: readonly string[] = []): string[] {
  const out = [
    headline(s),
    `  run ${s.run}, created ${isoTime(s.createdAt)}, updated ${isoTime(s.updatedAt)}, wake at ${isoTime(s.wakeAt)}`,
    `  input: ${brief(s.input, 200)}`,
  ];
  if (s.output !== undefined) out.push(`  output: ${brief(s.output, 200)}`);
  if (s.error) out.push(`  error: ${s.error.code ?? 'ERROR'} at ${s.error.step ?? '-'}: ${s.error.message}`);
  if (s.compensationError) out.push(`  compensation error: ${s.compensationError.message}`);
  if (s.reason !== undefined) out.push(`  reason: ${s.reason}`);
  if (s.saga) out.push(`  saga: ${s.saga.mode}, to compensate: ${s.saga.queue.join(', ') || '-'}`);

  if (extra.length) out.push('', ...extra);
  out.push('', 'steps:');
  const steps = Object.entries(s.steps);
  if (!steps.length) out.push('  (none entered yet)');
  else {
    const rows = steps.map(([id, st]) => [
      `  ${id}`,
      st.status,
      `attempt ${st.attempt}`,
      st.error
        ? `${st.error.code ?? 'ERROR'}: ${st.error.message}`
        : st.output !== undefined
          ? brief(st.output, 60)
          : '',
    ]);
    out.push(...table(rows));
  }
  const tasks = Object.values(s.tasks);
  out.push('', `tasks in flight:${tasks.length ? '' : ' none'}`);
  for (const t of tasks) {
    const state = t.queued ? 'queued for a worker' : `deadline ${isoTime(t.deadline)}`;
    out.push(`  ${t.step} (${t.phase}) ${t.handler} attempt ${t.attempt}, ${state}, key ${t.idempotencyKey}`);
  }
  out.push(`timers:${s.timers.length ? '' : ' none'}`);
  for (const t of s.timers) out.push(`  ${t.kind} for ${t.step} at ${isoTime(t.at)}`);
  out.push(`inbox:${s.inbox.length ? '' : ' empty'}`);
  for (const m of s.inbox) out.push(`  ${m.name}${m.id ? ` (${m.id})` : ''} ${brief(m.payload, 60)}`);

  out.push('', `log (last ${s.log.length}):`);
  out.push(
    ...table(
      s.log.map((e) => [
        `  v${e.v}`,
        isoTime(e.at),
        e.type,
        e.step ?? '',
        e.attempt !== undefined ? `#${e.attempt}` : '',
        e.detail ?? '',
      ]),
    ),
  );
  return out;
}
