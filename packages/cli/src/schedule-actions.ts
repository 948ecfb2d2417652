import { NotFoundError, type Store } from '@stepfold/engine';
import { createSchedules, type ScheduleDescription, type ScheduleInfo } from '@stepfold/engine/schedules';
import { isoTime, table } from './output.js';

// What each `stepfold schedule` subcommand does with an open store, apart from parsing and
// printing: testable on a memory store. Commands need no definitions: the schedule workflow is
// built in, and it is the workers (which have the targets) that start runs.

/** A subcommand's result: the JSON document (`--json`) and the lines for people. */
export interface ScheduleResult {
  data: unknown;
  lines: string[];
}

/** How a schedule fires, in a few words: `cron "0 2 * * *" Europe/Paris` or `every 60s`. */
export function whenText(s: ScheduleInfo): string {
  if (s.cron !== undefined) return `cron "${s.cron}" ${s.timeZone ?? 'UTC'}`;
  const ms = s.everyMs ?? 0;
  return ms % 1000 === 0 ? `every ${ms / 1000}s` : `every ${ms}ms`;
}

/** Epoch-ms clock of the commands' writes (`Date.now`; tests pass their own). */
type Clock = () => number;

const schedulesOver = (store: Store, clock?: Clock) =>
  createSchedules({ store, ...(clock ? { clock } : {}) });

/** `schedule list`: one row per schedule, paged. */
export async function listSchedules(
  store: Store,
  query: { limit: number; cursor?: string | undefined },
): Promise<ScheduleResult> {
  const page = await schedulesOver(store).list({ limit: query.limit, cursor: query.cursor ?? null });
  const rows = page.items.map((s) => [
    s.id,
    s.workflow,
    whenText(s),
    s.status,
    isoTime(s.nextSlot),
    String(s.counts.started),
    String(s.counts.skipped),
  ]);
  const lines = rows.length
    ? table([['id', 'workflow', 'when', 'status', 'next slot', 'started', 'skipped'], ...rows])
    : ['no schedules'];
  if (page.cursor) lines.push(`next page: --cursor ${page.cursor}`);
  return { data: page, lines };
}

/** The lines `schedule show` prints for a description. */
export function describeLines(d: ScheduleDescription): string[] {
  const skipped = Object.entries(d.skippedBy)
    .map(([why, n]) => `${why} ${n}`)
    .join(', ');
  const lines = [
    `${d.id}: ${d.status}${d.note ? ` (${d.note})` : ''}; starts ${d.workflow}${d.version ? ` v${d.version}` : ''}, ${whenText(d)}`,
    `overlap ${d.overlap}, catch-up window ${d.catchupWindowMs} ms${d.startAt !== undefined ? `, from ${isoTime(d.startAt)}` : ''}${d.endAt !== undefined ? `, until ${isoTime(d.endAt)}` : ''}`,
    `next slot ${isoTime(d.nextSlot)}, last slot ${isoTime(d.lastSlot)}${d.buffered !== null ? `, buffered ${isoTime(d.buffered)}` : ''}`,
    `started ${d.counts.started}, skipped ${d.counts.skipped} (${skipped}), triggered ${d.counts.triggered}, backfilled ${d.counts.backfilled}`,
  ];
  if (d.pendingCommands) lines.push(`commands waiting for a worker: ${d.pendingCommands}`);
  if (d.dlqError)
    lines.push(`parked by: ${d.dlqError.code ? `${d.dlqError.code}: ` : ''}${d.dlqError.message}`);
  if (d.lastError) lines.push(`last error: ${d.lastError}`);
  if (d.runs.length) {
    lines.push('recent runs:');
    lines.push(
      ...table([
        ['id', 'how', 'status', 'started at'],
        ...d.runs.map((r) => [r.id, r.how, r.status, isoTime(r.at)]),
      ]).map((l) => `  ${l}`),
    );
  }
  return lines;
}

/** `schedule show <id>`. */
export async function showSchedule(store: Store, id: string): Promise<ScheduleResult> {
  const d = await schedulesOver(store).describe(id);
  return { data: d, lines: describeLines(d) };
}

const later = 'a worker applies it at its next poll';

/** `schedule pause|resume|trigger|backfill|delete <id>`: one write each. */
export async function actOnSchedule(
  store: Store,
  id: string,
  action:
    | { op: 'pause'; note?: string | undefined }
    | { op: 'resume'; catchup: boolean }
    | { op: 'trigger' }
    | { op: 'backfill'; from: number; to: number }
    | { op: 'delete' },
  clock?: Clock,
): Promise<ScheduleResult> {
  const schedules = schedulesOver(store, clock);
  switch (action.op) {
    case 'pause':
      await schedules.pause(id, action.note === undefined ? {} : { note: action.note });
      return { data: { action: 'pause', id }, lines: [`pause written for ${id}; ${later}`] };
    case 'resume':
      await schedules.resume(id, { catchup: action.catchup });
      return {
        data: { action: 'resume', id, catchup: action.catchup },
        lines: [`resume${action.catchup ? ' (with catch-up)' : ''} written for ${id}; ${later}`],
      };
    case 'trigger': {
      const { runId } = await schedules.trigger(id);
      return {
        data: { action: 'trigger', id, runId },
        lines: [`trigger written for ${id}: run ${runId}; ${later}`],
      };
    }
    case 'backfill': {
      const { slots } = await schedules.backfill(id, action);
      return {
        data: { action: 'backfill', id, from: action.from, to: action.to, slots },
        lines: [
          `backfill of ${slots} slot(s) from ${isoTime(action.from)} to ${isoTime(action.to)} written for ${id}; those never started start when ${later}`,
        ],
      };
    }
    case 'delete':
      if (!(await schedules.delete(id))) throw new NotFoundError(id);
      return { data: { action: 'delete', id }, lines: [`deleted schedule ${id} (the runs it started stay)`] };
  }
}
