import { compileWorkflow } from '../definition/compile.js';
import { checkDeclared, declaredSchemas } from '../definition/declared-schemas.js';
import type { InputOf } from '../definition/typed-definition.js';
import { NotFoundError, RegistryError, ValidationError } from '../errors.js';
import { assertValidId } from '../ids.js';
import type { AnyDefinition } from '../runner/handler-types.js';
import { createRunner } from '../runner/runner.js';
import type { Runner } from '../runner/types.js';
import { isTerminal } from '../snapshot.js';
import type { Store } from '../store/store.js';
import {
  CONTROL_SIGNAL,
  FIRE_HANDLER,
  SCHEDULE_WORKFLOW,
  type ScheduleHandlers,
  scheduleWorkflow,
} from './definition.js';
import { MAX_BACKFILL_SLOTS } from './fire.js';
import { fireHandler } from './fire-handler.js';
import { isSchedule, type ScheduleDescription, type ScheduleInfo, scheduleInfo } from './info.js';
import {
  assertValidSpec,
  DEFAULT_CATCHUP_WINDOW_MS,
  DEFAULT_OVERLAP_CHECK_MS,
  MAX_SCHEDULE_ID_LENGTH,
  manualRunId,
  type OverlapPolicy,
  type ScheduleSpec,
  slotSource,
} from './spec.js';
import { initialState, type ScheduleCommand } from './state.js';

/** Options of {@link createSchedules}. */
export interface SchedulesOptions<W extends readonly AnyDefinition[]> {
  /** The store the schedules (and the runs they start) live in: your own, no extra server. */
  store: Store;
  /** The target workflows: `create` takes these, and a worker's fire handler starts them. */
  workflows?: W | undefined;
  /** Epoch-ms clock for create, trigger and backfill, and the event times written (default `Date.now`). */
  clock?: (() => number) | undefined;
}

/** When a schedule fires: a cron expression in a time zone, or a fixed interval. */
export type ScheduleTiming =
  | { cron: string; timeZone?: string | undefined; everyMs?: undefined }
  | { everyMs: number; cron?: undefined; timeZone?: undefined };

/** The input a schedule of `D` starts each run with: required when the definition declares one. */
export type ScheduleInput<D> = undefined extends InputOf<D> ? { input?: InputOf<D> } : { input: InputOf<D> };

/** Options of {@link Schedules.create} for the target definition `D`. */
export type CreateScheduleOptions<D> = {
  /** The schedule's id: its instance's id, and the prefix of every run it starts (`<id>:<slot ISO>`). */
  id: string;
  /** The target workflow: one of the definitions given to `createSchedules`. */
  workflow: D;
  /** The target version (default: the newest the worker registers). */
  version?: number | undefined;
  startAt?: number | Date | undefined;
  endAt?: number | Date | undefined;
  /** While the previous run goes on: `skip` (default) the slot, `bufferOne` keep one for later, `allow` start anyway. */
  overlap?: OverlapPolicy | undefined;
  /** A slot found later than this (after downtime) is skipped; default 60 000. */
  catchupWindowMs?: number | undefined;
  /** `bufferOne` only: how often a buffered slot checks the previous run (default 5 000). */
  overlapCheckMs?: number | undefined;
  /** Create it paused. */
  paused?: boolean | undefined;
  note?: string | undefined;
} & ScheduleTiming &
  ScheduleInput<D>;

/**
 * What {@link Schedules.create} takes before its rules: timing and input as loose fields, so a
 * mistake is reported by {@link ScheduleCheck}'s message and not as a mismatch with the union.
 */
type ScheduleFields<D> = Omit<CreateScheduleOptions<D>, 'cron' | 'timeZone' | 'everyMs' | 'input'> & {
  cron?: string | undefined;
  timeZone?: string | undefined;
  everyMs?: number | undefined;
  input?: InputOf<D> | undefined;
};

/**
 * The rules of {@link CreateScheduleOptions} the loose fields leave out, as a message on `id`
 * (always given, and short to print): exactly one of `cron` and `everyMs`, `timeZone` with `cron`
 * only, and `input` when the workflow declares one.
 */
type ScheduleCheck<D, O> = 'cron' | 'everyMs' extends keyof O
  ? { id: 'cron and everyMs together: give exactly one of them' }
  : 'cron' extends keyof O
    ? InputCheck<D, O>
    : 'everyMs' extends keyof O
      ? 'timeZone' extends keyof O
        ? { id: 'timeZone applies to a cron schedule only' }
        : InputCheck<D, O>
      : { id: 'give cron or everyMs: when the schedule fires' };
type InputCheck<D, O> =
  undefined extends InputOf<D>
    ? unknown
    : 'input' extends keyof O
      ? unknown
      : { id: 'the workflow declares an input: give the input each run starts with' };

/**
 * Infers which fields a call gives (their values are checked by {@link ScheduleFields}); a key no
 * field has is `never`, so a misspelt one is still an error.
 */
type FieldsGiven<O> = { [K in keyof O]: K extends keyof CreateScheduleOptions<unknown> ? unknown : never };

/** Schedules over one store: create and steer them here; workers drive them with `workflow` and `handlers`. */
export interface Schedules<W extends readonly AnyDefinition[] = readonly AnyDefinition[]> {
  /** The built-in schedule workflow: register it in every worker's runner that drives schedules. */
  readonly workflow: typeof scheduleWorkflow;
  /** Its handler, for the same runners (it starts the targets through a hand-off runner). */
  readonly handlers: ScheduleHandlers;
  /**
   * Creates a schedule: one write, after every check (an invalid cron, time zone or input is a
   * typed error and writes nothing; an existing id is `ALREADY_EXISTS`).
   */
  create<D extends W[number], O extends object>(
    options: ScheduleFields<D> & FieldsGiven<O> & NoInfer<ScheduleCheck<D, O>>,
  ): Promise<ScheduleInfo>;
  /** Stops starting runs (a buffered slot is skipped); slots that pass while paused are skipped. */
  pause(id: string, options?: { note?: string }): Promise<void>;
  /** Starts again from the next slot; with `catchup`, slots missed while paused start if inside the catch-up window. */
  resume(id: string, options?: { catchup?: boolean }): Promise<void>;
  /** Starts one run now (`<id>:manual:<ISO>`), whatever the overlap policy; resolves with its id. */
  trigger(id: string): Promise<{ runId: string }>;
  /** Starts every slot in `[from, to]` (at most 1 000, none in the future) whose run does not exist. */
  backfill(id: string, range: { from: number | Date; to: number | Date }): Promise<{ slots: number }>;
  /** Schedules in id order, paged. */
  list(query?: {
    limit?: number;
    cursor?: string | null;
  }): Promise<{ items: ScheduleInfo[]; cursor: string | null }>;
  /** One schedule with the status of its recent runs; `NOT_FOUND` if there is none. */
  describe(id: string): Promise<ScheduleDescription>;
  /** Ends the schedule and removes its instance (the runs it started stay); false if there was none. */
  delete(id: string): Promise<boolean>;
}

const ms = (v: number | Date | undefined) => (v instanceof Date ? v.getTime() : v);

/**
 * Schedules kept as instances of the built-in `stepfold.schedule` workflow in your store. Each slot
 * starts the target with the id `<schedule id>:<slot ISO>`, so a slot starts once however many
 * workers run: the store's create refuses a second start.
 *
 * @example
 * const schedules = createSchedules({ store, workflows: [report] });
 * const runner = createRunner({ store, workflows: [report, schedules.workflow], handlers: { ...handlers, ...schedules.handlers } });
 * await createWorker({ runner }).start();
 * await schedules.create({ id: 'nightly', workflow: report, cron: '0 2 * * *', timeZone: 'Europe/Paris', input: { team: 'ops' } });
 */
export function createSchedules<const W extends readonly AnyDefinition[] = readonly []>(
  options: SchedulesOptions<W>,
): Schedules<W> {
  const { store } = options;
  const clock = options.clock ?? (() => Date.now());
  const workflows: readonly AnyDefinition[] = options.workflows ?? [];
  const control = createRunner({ store, workflows: [scheduleWorkflow], execute: false, clock });
  const targets = createRunner({ store, workflows, execute: false, clock }) as unknown as Runner;

  /** The target definition (the object given, whose declared schemas are found by identity). */
  function target(workflow: AnyDefinition, version: number | undefined): AnyDefinition {
    const name = compileWorkflow(workflow).definition.name;
    const found = workflows.filter((w) => compileWorkflow(w).definition.name === name);
    const pick = found.find(
      (w) => version === undefined || compileWorkflow(w).definition.version === version,
    );
    if (!pick) {
      const what = version === undefined ? name : `${name} v${version}`;
      throw new RegistryError(
        'UNKNOWN_WORKFLOW',
        `schedule target ${what} is not among createSchedules' workflows`,
      );
    }
    return pick;
  }

  async function load(id: string) {
    assertValidId(id, 'schedule id');
    const s = await store.load(id);
    if (!isSchedule(s)) throw new NotFoundError(id);
    return s;
  }

  async function send(id: string, command: ScheduleCommand, signalId?: string): Promise<void> {
    await load(id);
    await control.signal(id, CONTROL_SIGNAL, command, { wait: 'write', ...(signalId ? { signalId } : {}) });
  }

  const schedules: Schedules<W> = {
    workflow: scheduleWorkflow,
    handlers: { [FIRE_HANDLER]: fireHandler(store, targets, clock) },
    async create(o) {
      assertValidId(o.id, 'schedule id');
      if (o.id.length > MAX_SCHEDULE_ID_LENGTH) {
        throw new ValidationError('INVALID_ID', 'schedule id too long', [
          { path: 'id', message: `at most ${MAX_SCHEDULE_ID_LENGTH} characters (run ids add a time to it)` },
        ]);
      }
      const def = target(o.workflow as AnyDefinition, o.version);
      const spec: ScheduleSpec = JSON.parse(
        JSON.stringify({
          workflow: compileWorkflow(def).definition.name,
          version: o.version,
          cron: o.cron,
          timeZone: o.timeZone,
          everyMs: o.everyMs,
          startAt: ms(o.startAt),
          endAt: ms(o.endAt),
          input: o.input,
          overlap: o.overlap ?? 'skip',
          catchupWindowMs: o.catchupWindowMs ?? DEFAULT_CATCHUP_WINDOW_MS,
          overlapCheckMs: o.overlapCheckMs ?? DEFAULT_OVERLAP_CHECK_MS,
        }),
      );
      assertValidSpec(spec);
      const schema = declaredSchemas(def)?.input;
      if (schema) await checkDeclared(schema, o.input, 'input');
      const state = initialState(spec, clock(), o.paused === true, o.note);
      const next = slotSource(spec)(state.cursor);
      if (next !== null && !state.paused) {
        state.nextSlot = next;
        state.wakeAt = next;
      }
      return scheduleInfo(await control.start(SCHEDULE_WORKFLOW, o.id, state, { wait: 'write' }));
    },
    pause: (id, o = {}) =>
      send(id, { op: 'pause', at: clock(), ...(o.note === undefined ? {} : { note: o.note }) }),
    resume: (id, o = {}) => send(id, { op: 'resume', ...(o.catchup ? { catchup: true } : {}) }),
    async trigger(id) {
      const at = clock();
      const runId = manualRunId(id, at);
      // The run id doubles as the signal id: the same trigger sent twice starts one run.
      await send(id, { op: 'trigger', runId, at }, runId);
      return { runId };
    },
    async backfill(id, range) {
      const s = await load(id);
      const from = ms(range.from)!;
      const to = ms(range.to)!;
      const issues = [];
      if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from > to)
        issues.push({ path: 'from', message: 'from and to must be times (epoch ms) with from <= to' });
      else if (to > clock()) issues.push({ path: 'to', message: 'must not be in the future' });
      let slots = 0;
      if (!issues.length) {
        const next = slotSource((s.input as { spec: ScheduleSpec }).spec);
        for (let t = next(from - 1); t !== null && t <= to; t = next(t)) {
          if (++slots > MAX_BACKFILL_SLOTS) {
            issues.push({
              path: 'to',
              message: `the range holds over ${MAX_BACKFILL_SLOTS} slots: split it`,
            });
            break;
          }
        }
      }
      if (issues.length) throw new ValidationError('INVALID_INPUT', 'invalid backfill range', issues);
      await send(id, { op: 'backfill', from, to });
      return { slots };
    },
    async list(q = {}) {
      const page = await store.list({
        workflow: SCHEDULE_WORKFLOW,
        limit: q.limit ?? 50,
        cursor: q.cursor ?? null,
      });
      return { items: page.items.filter(isSchedule).map(scheduleInfo), cursor: page.cursor };
    },
    async describe(id) {
      const s = await load(id);
      const info = scheduleInfo(s);
      const runs = await Promise.all(
        info.recent.map(async (r) => ({
          ...r,
          status: (await store.load(r.id))?.status ?? ('deleted' as const),
        })),
      );
      return { ...info, runs };
    },
    async delete(id) {
      assertValidId(id, 'schedule id');
      const s = await store.load(id);
      if (!isSchedule(s)) return false;
      // Ended first (a conditional write): a worker holding the instance cannot write it on, and
      // no fire is dispatched from here. A fire already running may still start its due slot.
      if (!isTerminal(s.status)) await control.abort(id, 'schedule deleted');
      return store.delete(id);
    },
  };
  return schedules;
}
