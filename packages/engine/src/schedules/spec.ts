import { Cron } from 'croner';
import { type Issue, ValidationError } from '../errors.js';

// What a schedule is, as stored in its instance (JSON), and the slots it names. Slot times are
// computed here from a time given by the caller: nothing in this module reads a clock.

/** What a schedule does when a slot falls due while the run it started last is still going. */
export type OverlapPolicy = 'skip' | 'bufferOne' | 'allow';

/** The overlap policies, for validation and help texts. */
export const OVERLAP_POLICIES: readonly OverlapPolicy[] = ['skip', 'bufferOne', 'allow'];

/** A schedule's definition as stored in its instance: when it fires and what it starts. */
export interface ScheduleSpec {
  /** The target workflow's name. */
  workflow: string;
  /** The target's version (default: the newest the worker registers). */
  version?: number;
  /** A cron expression (5 fields, or 6 with seconds first), read in `timeZone`. */
  cron?: string;
  /** IANA time zone of `cron` (default `UTC`). */
  timeZone?: string;
  /** A fixed interval instead of `cron`: slots at `startAt` (or the epoch) plus multiples of it. */
  everyMs?: number;
  /** No slot before this time (epoch ms). */
  startAt?: number;
  /** No slot after this time (epoch ms). */
  endAt?: number;
  /** The input each run starts with. */
  input?: unknown;
  overlap: OverlapPolicy;
  /** A slot found more than this late (after downtime) is skipped, not started. */
  catchupWindowMs: number;
  /** With `bufferOne`: how often a buffered slot looks whether the previous run has finished. */
  overlapCheckMs: number;
}

/** Default catch-up window: a slot up to a minute late still starts. */
export const DEFAULT_CATCHUP_WINDOW_MS = 60_000;
/** Default pace at which a buffered slot checks the run before it. */
export const DEFAULT_OVERLAP_CHECK_MS = 5_000;
/** Shortest interval accepted (a shorter one would keep workers busy for nothing). */
export const MIN_INTERVAL_MS = 1_000;
/** Longest schedule id: a run id adds `:` and a 24-character ISO time (or `:manual:` and one). */
export const MAX_SCHEDULE_ID_LENGTH = 160;

/** The next slot strictly after a time, or null when there is none (past `endAt`, or a cron that never matches). */
export type SlotSource = (after: number) => number | null;

/** The slots of a (validated) spec. */
export function slotSource(spec: ScheduleSpec): SlotSource {
  const { startAt, endAt } = spec;
  const raw = spec.cron !== undefined ? cronSlots(spec.cron, spec.timeZone) : intervalSlots(spec);
  return (after) => {
    const from = startAt !== undefined && after < startAt ? startAt - 1 : after;
    const next = raw(from);
    return next === null || (endAt !== undefined && next > endAt) ? null : next;
  };
}

function cronSlots(expression: string, timeZone: string | undefined): SlotSource {
  // paused with no callback: croner evaluates only and never sets a timer.
  const cron = new Cron(expression, { timezone: timeZone ?? 'UTC', paused: true });
  return (after) => cron.nextRun(new Date(after))?.getTime() ?? null;
}

function intervalSlots(spec: ScheduleSpec): SlotSource {
  const every = spec.everyMs!;
  const anchor = spec.startAt ?? 0;
  return (after) => (after < anchor ? anchor : anchor + (Math.floor((after - anchor) / every) + 1) * every);
}

/** A slot's time as it appears in run ids: ISO 8601 UTC with milliseconds. */
export function slotIso(slot: number): string {
  return new Date(slot).toISOString();
}

/** The run id of a slot: `<schedule id>:<slot ISO>`, the same in every process. */
export function slotRunId(scheduleId: string, slot: number): string {
  return `${scheduleId}:${slotIso(slot)}`;
}

/** The run id of a trigger-now at `at`: `<schedule id>:manual:<ISO>`, never a slot's id. */
export function manualRunId(scheduleId: string, at: number): string {
  return `${scheduleId}:manual:${slotIso(at)}`;
}

const isInt = (v: unknown, min: number): v is number => Number.isSafeInteger(v) && (v as number) >= min;

// The evaluator takes a seventh field (a year) too: refused, so the documented forms are the only ones.
const CRON_FIELDS = [5, 6];

/** How many fields a cron expression has; a nickname such as `@daily` counts as five. */
function cronFields(cron: string): number {
  const fields = cron.trim().split(/\s+/);
  return fields.length === 1 && fields[0]!.startsWith('@') ? 5 : fields.length;
}

/** Whether the runtime knows this IANA zone (Intl is in every runtime the engine supports). */
function knownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Every problem with a spec, so a bad schedule is refused with all of them at once. */
export function specIssues(spec: ScheduleSpec): Issue[] {
  const issues: Issue[] = [];
  const bad = (path: string, message: string) => issues.push({ path, message });
  const { cron, everyMs, timeZone } = spec;
  if ((cron === undefined) === (everyMs === undefined)) bad('cron', 'give exactly one of cron or everyMs');
  if (timeZone !== undefined) {
    if (cron === undefined) bad('timeZone', 'timeZone applies to a cron expression only');
    else if (typeof timeZone !== 'string' || !knownTimeZone(timeZone))
      bad('timeZone', `unknown IANA time zone ${JSON.stringify(timeZone)}`);
  }
  if (cron !== undefined) {
    if (typeof cron !== 'string' || cron.length > 200) bad('cron', 'must be a cron expression string');
    else if (!CRON_FIELDS.includes(cronFields(cron)))
      bad(
        'cron',
        `${JSON.stringify(cron)} has ${cronFields(cron)} fields: must have 5, or 6 with seconds first`,
      );
    else {
      try {
        new Cron(cron, { timezone: timeZone ?? 'UTC', paused: true });
      } catch (e) {
        bad('cron', `invalid cron expression ${JSON.stringify(cron)}: ${(e as Error).message}`);
      }
    }
  }
  if (everyMs !== undefined && !isInt(everyMs, MIN_INTERVAL_MS))
    bad('everyMs', `must be an integer of at least ${MIN_INTERVAL_MS}`);
  for (const key of ['startAt', 'endAt'] as const) {
    const v = spec[key];
    if (v !== undefined && !isInt(v, 0)) bad(key, 'must be a time in epoch ms');
  }
  if (spec.startAt !== undefined && spec.endAt !== undefined && spec.endAt < spec.startAt)
    bad('endAt', 'must not be before startAt');
  if (!OVERLAP_POLICIES.includes(spec.overlap))
    bad('overlap', `must be one of ${OVERLAP_POLICIES.join(', ')}`);
  if (!isInt(spec.catchupWindowMs, 0)) bad('catchupWindowMs', 'must be a non-negative integer');
  if (!isInt(spec.overlapCheckMs, 100)) bad('overlapCheckMs', 'must be an integer of at least 100');
  if (spec.version !== undefined && !isInt(spec.version, 1)) bad('version', 'must be a positive integer');
  return issues;
}

/** Throws `INVALID_DEFINITION` listing every problem of the spec; nothing is written before this passes. */
export function assertValidSpec(spec: ScheduleSpec): void {
  const issues = specIssues(spec);
  if (issues.length) throw new ValidationError('INVALID_DEFINITION', 'invalid schedule', issues);
}
