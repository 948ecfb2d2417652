import type { Snapshot, StepState } from '@stepfold/engine';
import { LAMBDA_INVOKE } from './checks.js';
import type { AslImport } from './from-asl.js';
import type { StepPlan } from './plan.js';
import { type CarriedError, isStateOutput, iterationOf, type StateOutput } from './state-output.js';

// An execution's history in the shape of Step Functions' GetExecutionHistory, read from stored
// snapshots: every generated step the ASL handler ran left its output with a sequence number, the
// state's name and type, so the outputs in sequence order are the states in the order they ran.
// A step keeps only its latest output: a state entered more than once (a loop) shows its last
// entry, a retried Task its failed attempts with the last failure's error. Lambda payloads and
// results are not kept in the snapshot, so their events carry the resource and errors only.

/** One event as GetExecutionHistory returns it: id, previous id, time, type and its details. */
export interface AslHistoryEvent {
  /** 1, 2, 3 ... in order. */
  id: number;
  /** The event before it (0 for the first). */
  previousEventId: number;
  timestamp: Date;
  /** `ExecutionStarted`, `TaskStateEntered`, `LambdaFunctionScheduled`, `MapIterationStarted`, ... */
  type: string;
  executionStartedEventDetails?: Record<string, unknown>;
  executionSucceededEventDetails?: Record<string, unknown>;
  executionFailedEventDetails?: Record<string, unknown>;
  executionAbortedEventDetails?: Record<string, unknown>;
  stateEnteredEventDetails?: Record<string, unknown>;
  stateExitedEventDetails?: Record<string, unknown>;
  lambdaFunctionScheduledEventDetails?: Record<string, unknown>;
  lambdaFunctionFailedEventDetails?: Record<string, unknown>;
  taskScheduledEventDetails?: Record<string, unknown>;
  taskStartedEventDetails?: Record<string, unknown>;
  taskSucceededEventDetails?: Record<string, unknown>;
  taskFailedEventDetails?: Record<string, unknown>;
  mapStateStartedEventDetails?: Record<string, unknown>;
  mapIterationStartedEventDetails?: Record<string, unknown>;
  mapIterationSucceededEventDetails?: Record<string, unknown>;
  mapIterationFailedEventDetails?: Record<string, unknown>;
}

/** Options of {@link toAslHistory}. */
export interface AslHistoryOptions {
  /**
   * The Map iterations' instances (child instances of the Map steps), by id or as a list: their
   * states' events go inside the Map's. Without them each iteration shows only its start and end.
   */
  children?: ((id: string) => Snapshot | undefined) | readonly Snapshot[] | undefined;
}

type Emit = (type: string, at: number, details?: Record<string, Record<string, unknown>>) => void;

interface Entry {
  id: string;
  step: StepState;
  out: StateOutput | undefined;
  seq: number;
  role: StepPlan['role'];
}

const json = (v: unknown): string => JSON.stringify(v ?? null);
const payload = (field: string, v: unknown) => ({
  [field]: json(v),
  [`${field}Details`]: { truncated: false },
});

/**
 * The execution's history in Step Functions' event shape (GetExecutionHistory), from its snapshot:
 * `ExecutionStarted`, each state's `…StateEntered`/`…StateExited`, the Lambda events of its Task
 * states, Map and Parallel events, and how it ended; times are the snapshot's step times. Pass the
 * import (for snapshots written before outputs named their state's type) and the Map iterations'
 * child snapshots to see inside them.
 *
 * @example
 * const events = toAslHistory(await runner.get('order-1'), imported, { children: (id) => byId.get(id) });
 */
export function toAslHistory(
  snapshot: Snapshot,
  imported?: AslImport,
  options: AslHistoryOptions = {},
): AslHistoryEvent[] {
  const events: AslHistoryEvent[] = [];
  const emit: Emit = (type, at, details = {}) => {
    const id = events.length + 1;
    events.push({
      id,
      previousEventId: id - 1,
      timestamp: new Date(at),
      type,
      ...details,
    } as AslHistoryEvent);
  };
  const children = options.children;
  const child: (id: string) => Snapshot | undefined =
    typeof children === 'function'
      ? children
      : (id) => (children as readonly Snapshot[] | undefined)?.find((c) => c.id === id);
  emit('ExecutionStarted', snapshot.createdAt, {
    executionStartedEventDetails: payload('input', snapshot.input),
  });
  walk(snapshot, imported, emit, child);
  if (snapshot.status === 'completed')
    emit('ExecutionSucceeded', snapshot.updatedAt, {
      executionSucceededEventDetails: payload('output', snapshot.output),
    });
  else if (snapshot.status === 'failed')
    emit('ExecutionFailed', snapshot.updatedAt, {
      executionFailedEventDetails: errorDetails({
        error: snapshot.error?.code ?? null,
        cause: snapshot.error?.message ?? null,
      }),
    });
  else if (snapshot.status === 'cancelled' || snapshot.status === 'aborted')
    emit('ExecutionAborted', snapshot.updatedAt, { executionAbortedEventDetails: {} });
  return events;
}

function errorDetails(e: CarriedError): Record<string, unknown> {
  return { ...(e.error === null ? {} : { error: e.error }), ...(e.cause === null ? {} : { cause: e.cause }) };
}

/** The steps whose outputs carry the current value of the scope `id` is in (its prefix up to the last `/`). */
function scopeOf(id: string, entries: readonly Entry[]): { producers: Entry[]; entry?: Entry | undefined } {
  const cut = id.lastIndexOf('/');
  const prefix = cut < 0 ? '' : id.slice(0, cut + 1);
  const producers = entries.filter(
    (e) => e.id.startsWith(prefix) && !e.id.slice(prefix.length).includes('/') && e.role !== 'again',
  );
  // A Parallel branch's steps are `<parallel>/<i>/<state>`: its entry is the Parallel's first step.
  const branch = /^(.*)\/\d+\/$/.exec(prefix);
  return { producers, entry: branch ? entries.find((e) => e.id === branch[1]) : undefined };
}

/** The scope's value just before `seq`: the latest producer's output, else its entry's, else the input. */
function inputAt(seq: number, id: string, entries: readonly Entry[], input: unknown): unknown {
  const { producers, entry } = scopeOf(id, entries);
  let best: Entry | undefined;
  for (const e of [...producers, ...(entry ? [entry] : [])])
    if (e.out && e.seq < seq && (!best || e.seq > best.seq)) best = e;
  if (best?.out) return best.out.value;
  const it = iterationOf(input);
  return it ? it.value : input;
}

function roleOf(id: string, imported: AslImport | undefined): StepPlan['role'] {
  const p = imported?.plan[id];
  if (p) return p.role;
  return id.endsWith(':again') ? 'again' : id.endsWith(':after') ? 'after' : 'state';
}

/** The events of one instance's states (the execution's, or a Map iteration's). */
function walk(
  s: Snapshot,
  imported: AslImport | undefined,
  emit: Emit,
  child: (id: string) => Snapshot | undefined,
): void {
  const entries: Entry[] = [];
  for (const [id, step] of Object.entries(s.steps)) {
    // Only the steps the handler runs: `:end` steps carry a state's output on, `:route` and the
    // rest are the engine's own.
    const suffix = /:[a-z]+$/.exec(id)?.[0];
    if (suffix !== undefined && suffix !== ':again' && suffix !== ':after') continue;
    const out = isStateOutput(step.output) ? step.output : undefined;
    // The step that failed the execution left no output: it is the last thing that happened.
    const failing = !out && step.status === 'failed' && s.error?.step === id;
    if (out || failing)
      entries.push({ id, step, out, seq: out?.seq ?? Number.MAX_SAFE_INTEGER, role: roleOf(id, imported) });
  }
  entries.sort((a, b) => a.seq - b.seq);
  for (const e of entries) {
    const p = imported?.plan[e.id];
    const name = e.out?.state ?? p?.name ?? e.id;
    const type = e.out?.type ?? p?.state.Type ?? 'Task';
    const resource = e.out?.resource ?? (p?.state['Resource'] as string | undefined);
    const failure: CarriedError | undefined =
      e.out?.error ??
      e.out?.caught ??
      (e.out ? undefined : { error: s.error?.code ?? null, cause: s.error?.message ?? null });
    const started = e.step.startedAt;
    const finished = e.step.finishedAt ?? s.updatedAt;
    const enter = (at: number, input: unknown) =>
      emit(`${type}StateEntered`, at, { stateEnteredEventDetails: { name, ...payload('input', input) } });
    const exit = (at: number) =>
      emit(`${type}StateExited`, at, {
        stateExitedEventDetails: { name, ...payload('output', e.out?.value) },
      });
    if (e.role === 'again') {
      // A retried Task: its entry and the failed attempts, whose outputs the last attempt replaced.
      const task = e.id.slice(0, -':again'.length);
      const retry = s.steps[`${task}:retry`];
      const at = retry?.startedAt ?? started;
      enter(at, e.out?.retry?.input);
      for (let i = 0; i < (e.out?.retry?.attempts ?? 1); i++) lambdaEvents(emit, at, resource, e.out?.error);
      continue;
    }
    if (e.role === 'after') {
      if (type === 'Map') mapIterations(s, e.id.slice(0, -':after'.length), emit, child, imported);
      if (e.out?.route === 'retry') continue;
      const failed =
        e.out === undefined || e.out.route === 'error' || e.out.route?.startsWith('catch:') === true;
      emit(`${type}State${failed ? 'Failed' : 'Succeeded'}`, finished);
      if (e.out && e.out.route !== 'error') exit(finished);
      continue;
    }
    const again = entries.find((x) => x.id === `${e.id}:again` && x.seq < e.seq);
    if (!again) enter(started, inputAt(e.seq, e.id, entries, s.input));
    if (type === 'Task') lambdaEvents(emit, started, resource, failure, finished);
    if (type === 'Map' || type === 'Parallel') {
      if (!e.out) continue;
      const length = Array.isArray(e.out.items)
        ? { mapStateStartedEventDetails: { length: e.out.items.length } }
        : undefined;
      emit(`${type}StateStarted`, finished, length);
      continue;
    }
    if (!e.out || type === 'Fail' || e.out.route === 'retry' || e.out.route === 'error') continue;
    // A Wait exits when its timer fires.
    const wait = type === 'Wait' ? s.steps[`${e.id}:wait`]?.finishedAt : undefined;
    exit(wait ?? finished);
  }
}

/** A Lambda call's events: `LambdaFunction…` for a function ARN, `Task…` for `lambda:invoke`. */
function lambdaEvents(
  emit: Emit,
  at: number,
  resource: string | undefined,
  failure: CarriedError | undefined,
  end = at,
): void {
  if (resource === LAMBDA_INVOKE) {
    const which = { resourceType: 'lambda', resource: 'invoke' };
    emit('TaskScheduled', at, { taskScheduledEventDetails: which });
    emit('TaskStarted', at, { taskStartedEventDetails: which });
    if (failure) emit('TaskFailed', end, { taskFailedEventDetails: { ...which, ...errorDetails(failure) } });
    else emit('TaskSucceeded', end, { taskSucceededEventDetails: which });
    return;
  }
  emit('LambdaFunctionScheduled', at, {
    lambdaFunctionScheduledEventDetails: resource === undefined ? {} : { resource },
  });
  emit('LambdaFunctionStarted', at);
  if (failure) emit('LambdaFunctionFailed', end, { lambdaFunctionFailedEventDetails: errorDetails(failure) });
  else emit('LambdaFunctionSucceeded', end);
}

/** A Map's iterations: each one's start, its states (when its child snapshot is given), its end. */
function mapIterations(
  s: Snapshot,
  mapState: string,
  emit: Emit,
  child: (id: string) => Snapshot | undefined,
  imported: AslImport | undefined,
): void {
  const mapStep = `${mapState}:map`;
  const st = s.steps[mapStep];
  const first = s.steps[mapState]?.output;
  const items = isStateOutput(first) && Array.isArray(first.items) ? first.items : [];
  const results = Array.isArray(st?.output) ? (st.output as unknown[]) : [];
  const name = isStateOutput(first) ? first.state : mapState;
  // Only the iterations the map step started: it may have stopped at a failed one, or be running.
  items.slice(0, st?.map?.next ?? items.length).forEach((_, index) => {
    const c = st ? child(`${s.id}/${s.run}/${mapStep}/${st.iteration}/${index}`) : undefined;
    const at = c?.createdAt ?? st?.startedAt ?? s.updatedAt;
    emit('MapIterationStarted', at, { mapIterationStartedEventDetails: { name, index } });
    if (c) walk(c, imported, emit, child);
    const r = c ? c.output : results[index];
    const failed = c
      ? c.status === 'failed' || (isStateOutput(r) && r.error !== undefined)
      : isStateOutput(r) && r.error !== undefined;
    const end = c?.updatedAt ?? st?.finishedAt ?? s.updatedAt;
    if (failed) emit('MapIterationFailed', end, { mapIterationFailedEventDetails: { name, index } });
    else emit('MapIterationSucceeded', end, { mapIterationSucceededEventDetails: { name, index } });
  });
}

/**
 * Fetches the Map iterations' child instances of a snapshot, and theirs in turn, for
 * {@link toAslHistory}'s `children` (`get` is a runner's or store's read by id).
 *
 * @example
 * const children = await aslChildren(snapshot, (id) => runner.get(id));
 * const events = toAslHistory(snapshot, imported, { children });
 */
export async function aslChildren(
  snapshot: Snapshot,
  get: (id: string) => Promise<Snapshot | null | undefined>,
): Promise<Snapshot[]> {
  const found: Snapshot[] = [];
  const visit = async (s: Snapshot): Promise<void> => {
    for (const [id, st] of Object.entries(s.steps)) {
      if (!id.endsWith(':map')) continue;
      const first = s.steps[id.slice(0, -':map'.length)]?.output;
      const count =
        st.map?.next ?? (isStateOutput(first) && Array.isArray(first.items) ? first.items.length : 0);
      for (let i = 0; i < count; i++) {
        const c = await get(`${s.id}/${s.run}/${id}/${st.iteration}/${i}`);
        if (!c) continue;
        found.push(c);
        await visit(c);
      }
    }
  };
  await visit(snapshot);
  return found;
}
