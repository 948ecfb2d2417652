import { attemptOverdue, type Snapshot, tokenUsage, type UsageTotal } from '@stepfold/engine';
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
  /** Attempts running past their lease or deadline (their runner died, most likely); absent when none. */
  overdue?: number | undefined;
  /** Its search attributes; absent when it has none. */
  search?: Record<string, string | number | boolean> | undefined;
}

/** Attempts of `s` overdue at `now` (see `attemptOverdue`). */
function overdueCount(s: Snapshot, now: number): number {
  let n = 0;
  for (const key in s.tasks) if (attemptOverdue(s.tasks[key]!, now)) n++;
  return n;
}

/** The `list` row of a snapshot; `now` marks its overdue attempts. */
export function instanceRow(s: Snapshot, now: number = Date.now()): InstanceRow {
  const overdue = overdueCount(s, now);
  return {
    id: s.id,
    workflow: s.workflow.name,
    workflowVersion: s.workflow.version,
    status: s.status,
    version: s.version,
    active: [...s.active],
    wakeAt: s.wakeAt,
    updatedAt: s.updatedAt,
    ...(overdue ? { overdue } : {}),
    ...(s.search ? { search: { ...s.search } } : {}),
  };
}

/** `list` rows as a table. */
export function renderRows(rows: readonly InstanceRow[]): string[] {
  // A column of search attributes only when some row has them: tables of other stores stay as they were.
  const searched = rows.some((r) => r.search);
  const attrs = (r: InstanceRow) =>
    searched
      ? [
          Object.entries(r.search ?? {})
            .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
            .join(' ') || '-',
        ]
      : [];
  return table([
    ['ID', 'WORKFLOW', 'STATUS', 'VERSION', 'ACTIVE', 'WAKE AT', 'UPDATED', ...(searched ? ['SEARCH'] : [])],
    ...rows.map((r) => [
      r.id,
      `${r.workflow}@${r.workflowVersion}`,
      r.overdue ? `${r.status} (${r.overdue} overdue)` : r.status,
      String(r.version),
      r.active.join(',') || '-',
      isoTime(r.wakeAt),
      isoTime(r.updatedAt),
      ...attrs(r),
    ]),
  ]);
}

/**
 * What `show` reports of a snapshot, as JSON: the state without the bookkeeping. Given `now`, a
 * task running past its lease or deadline says `overdue: true`.
 */
export function summarize(s: Snapshot, now?: number) {
  const tokens = tokenUsage(s);
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
    tasks: Object.values(s.tasks).map((t) =>
      now !== undefined && attemptOverdue(t, now) ? { ...t, overdue: true } : t,
    ),
    timers: s.timers,
    inbox: s.inbox,
    ...(s.saga ? { saga: s.saga } : {}),
    ...(tokens ? { tokens } : {}),
    wakeAt: s.wakeAt,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    log: s.log,
  };
}

/** A usage total as words: `30 in, 9 out, 39 total over 3 model calls`. */
export function tokenLine(t: UsageTotal): string {
  return `${t.inputTokens} in, ${t.outputTokens} out, ${t.totalTokens} total over ${t.modelCalls} model call${t.modelCalls === 1 ? '' : 's'}`;
}

/** The headline of a snapshot: id, workflow, status, version. */
export function headline(s: Snapshot): string {
  return `${s.id}  ${s.workflow.name}@${s.workflow.version}  ${s.status}  v${s.version}`;
}

/**
 * A snapshot for people: status, steps, in-flight tasks, timers, inbox, error, transition log;
 * `extra` lines (what it can take now) go after the headline block, before the steps. Given `now`,
 * a task running past its lease or deadline is marked OVERDUE.
 */
export function renderSnapshot(s: Snapshot, extra: readonly string[] = [], now?: number): string[] {
  const out = [
    headline(s),
    `  run ${s.run}, created ${isoTime(s.createdAt)}, updated ${isoTime(s.updatedAt)}, wake at ${isoTime(s.wakeAt)}`,
    `  input: ${brief(s.input, 200)}`,
  ];
  if (s.output !== undefined) out.push(`  output: ${brief(s.output, 200)}`);
  const tokens = tokenUsage(s);
  if (tokens) out.push(`  tokens: ${tokenLine(tokens)}`);
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
    const lease = t.leaseUntil === undefined ? '' : `, lease until ${isoTime(t.leaseUntil)}`;
    const state = t.queued ? 'queued for a worker' : `deadline ${isoTime(t.deadline)}${lease}`;
    // Its runner stopped renewing it (or it ran past its deadline): the next due poll retries it.
    const overdue =
      now !== undefined && attemptOverdue(t, now) ? ' OVERDUE (retried at the next due poll)' : '';
    out.push(
      `  ${t.step} (${t.phase}) ${t.handler} attempt ${t.attempt}, ${state}${overdue}, key ${t.idempotencyKey}`,
    );
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
