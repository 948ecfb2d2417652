import { checkDeclared, declaredSchemas } from '../definition/declared-schemas.js';
import type { WorkflowDefinition } from '../definition/schema.js';
import { AlreadyExistsError, isStepfoldError, NotFoundError, ValidationError } from '../errors.js';
import type { WorkflowEvent } from '../events.js';
import { assertValidId } from '../ids.js';
import { type ReduceOptions, reduce } from '../reducer/reducer.js';
import { isPriority, isTerminal, type LogEntry, MAX_PRIORITY, type Snapshot } from '../snapshot.js';
import type { SaveFlow } from '../store/flow.js';
import type { Store } from '../store/store.js';
import type { FlowGatePort } from './flow-port.js';
import { InstanceWrites } from './instance-writes.js';
import { loadInstance } from './load.js';
import type { PayloadPort } from './payload-port.js';
import type { WorkflowRegistry } from './registry.js';
import type { RunnerInstrumentation } from './traced.js';
import type {
  BasedWrite,
  Create,
  CreateRequest,
  MergedEvent,
  Write,
  WriteBase,
  WriteRequest,
} from './write-request.js';

/**
 * What a write that lost a race was, for `runner.stats.lostRaces`: what a worker's tick says it
 * was (`sent`), `take` (a tick from a snapshot others may act on too, given up at once; `take@claim`
 * when the store handed it out with a claim), else its event's type, with `@claim` when it started
 * from a snapshot the store handed out.
 */
function raceKind(request: WriteRequest): string {
  if (request.taken?.race) return request.taken.race;
  if (request.onConflict === 'fail') return request.base?.origin === 'store' ? 'take@claim' : 'take';
  const type = request.event(0).type; // the event varies with the time only
  return request.base?.origin === 'store' ? `${type}@claim` : type;
}

/** A result in a batch: its event, and how its own promise settles. */
type Joined = MergedEvent & { settle(s: Snapshot | undefined, e?: unknown): void };

/** What a {@link WriteLoop} writes with. */
export interface WriteLoopOptions {
  store: Store;
  registry: WorkflowRegistry;
  /** Epoch-ms clock: the time of every event written. */
  clock: () => number;
  /** How often a lost race is reloaded and re-applied before its VERSION_CONFLICT is thrown. */
  conflictRetries: number;
  /** Every event written says its tasks are queued for a worker (a runner that runs no handlers). */
  handoff: boolean;
  /** Tracing around every write and create, when given. */
  instrument?: RunnerInstrumentation | undefined;
  /** Offloads a start's input over the threshold (after its declared-schema check). */
  payloads?: PayloadPort | undefined;
  /** The store's flow limits, asked around every write that touches them (when the store has `flow`). */
  gate?: FlowGatePort | undefined;
  /** The lease the reducer gives an attempt that starts running (the runner's `taskLeaseMs`; default the reducer's). */
  leaseMs?: number | undefined;
}

/**
 * The runner's writes: load → reduce → save conditional on the version, re-applied on a conflict
 * (jittered, up to `conflictRetries` times), and creating instances (reusing a finished id when
 * asked). Each successful write is reported to the `onWrite` of the call that made it.
 */
export class WriteLoop {
  private readonly store: Store;
  /** The runner's registered definitions (read by `runnerInternals`, for migrations). */
  readonly registry: WorkflowRegistry;
  /** The runner's clock: the time of every event written. */
  readonly clock: () => number;
  private readonly maxConflicts: number;
  private readonly handoff: boolean;
  private readonly payloads: PayloadPort | undefined;
  private readonly gate: FlowGatePort | undefined;
  /** What every reduce runs with: the runner's kinds and its attempts' lease. */
  private readonly reducing: ReduceOptions;
  /** The same, for a snapshot this runner's reducer made (made once: a spread per write showed). */
  private readonly reducingTrusted: ReduceOptions;
  /** This runner's writes per instance, one at a time, each from the newest snapshot it wrote. */
  private readonly queue = new InstanceWrites();

  /** Successful writes, conflicts retried and every lost race by the write that lost, for {@link Runner.stats}. */
  readonly stats = { writes: 0, conflicts: 0, lostRaces: {} as Record<string, number> };

  /**
   * Applies one event to the stored instance and saves it (see {@link WriteRequest}); resolves
   * with the stored snapshot, the same one when the event did not apply. Writes of one instance by
   * this runner go one at a time, each from the newest snapshot the one before wrote.
   */
  readonly apply: Write;

  /**
   * Creates and starts an instance (see {@link CreateRequest}), reusing a finished id when asked;
   * if someone else got there first the result is `ALREADY_EXISTS`.
   */
  readonly create: Create;

  constructor(o: WriteLoopOptions) {
    this.store = o.store;
    this.registry = o.registry;
    this.clock = o.clock;
    this.maxConflicts = o.conflictRetries;
    this.handoff = o.handoff;
    this.payloads = o.payloads;
    this.gate = o.gate;
    this.reducing = { kinds: o.registry.kinds, leaseMs: o.leaseMs, trusted: false };
    this.reducingTrusted = { ...this.reducing, trusted: true };
    // Tracing is decided here, once: wrapped or raw, the calls below never ask again.
    const raw: BasedWrite = (r, base) => this.write(r, base);
    const insert: Create = (r) => this.insert(r);
    const traced = o.instrument?.traced;
    const write = traced ? traced.write((id) => this.load(id), raw) : raw;
    this.apply = (r) =>
      r.merge && !r.taken && !r.check
        ? // Nothing of the instance in flight here: the write starts now, so no later result can
          // join it (a batch leaves `open` as its write starts). A result alone is written as is.
          this.queue.busy(r.id)
          ? this.merged(r, write)
          : this.queue.run(r, write)
        : this.queue.run(r, r.taken ? r.taken.wrap(write) : write);
    this.create = traced ? traced.create(o.registry, insert) : insert;
  }

  /** Batches of handler results waiting for an earlier write of their instance, by instance. */
  private readonly open = new Map<string, { onWrite: WriteRequest['onWrite']; also: Joined[] }>();

  /**
   * A handler's result: joins the batch waiting behind the instance's write in flight when it has
   * the same `onWrite` (one call's results: its hooks are told once), else starts one. A batch is
   * one write: one conditional save for every result in it.
   */
  private merged(r: WriteRequest, write: BasedWrite): Promise<Snapshot> {
    const waiting = this.open.get(r.id);
    const joins = waiting !== undefined && waiting.onWrite === r.onWrite;
    const batch = joins ? waiting : { onWrite: r.onWrite, also: [] as Joined[] };
    // Each result (the first one too) settles alone: one the reducer refuses rejects, the rest are written.
    let refused: unknown;
    let settle!: (s: Snapshot | undefined, e?: unknown) => void;
    const mine = new Promise<Snapshot>((resolve, reject) => {
      settle = (s, e) => (e !== undefined || refused !== undefined ? reject(e ?? refused) : resolve(s!));
    });
    const entry: Joined = { event: r.event, refused: (e) => (refused = e), settle };
    if (joins) {
      batch.also.push(entry);
      return mine;
    }
    this.open.set(r.id, batch);
    this.queue
      .run({ ...r, also: batch.also, refused: entry.refused }, (request, base) => {
        if (this.open.get(r.id) === batch) this.open.delete(r.id);
        return write(request, base);
      })
      .then(
        (s) => {
          entry.settle(s);
          for (const m of batch.also) m.settle(s);
        },
        (e) => {
          const error = e ?? new Error('write failed');
          entry.settle(undefined, error);
          for (const m of batch.also) m.settle(undefined, error);
        },
      );
    return mine;
  }

  /** The stored instance; NOT_FOUND if there is none. */
  private async load(id: string): Promise<Snapshot> {
    const loaded = await loadInstance(this.store, id);
    if (!loaded) throw new NotFoundError(id);
    return loaded;
  }

  /**
   * One event's write: load (unless given a base) → reduce → save conditional on the version,
   * re-applied on a lost race. A write from a base with nothing to check or consume first (every
   * handler result) goes without an async frame: reduced at once, then the save's promise; only a
   * lost race takes the loop.
   */
  private write(request: WriteRequest, base: WriteBase | undefined): Promise<Snapshot> {
    // Flow limits are asked around the save (when a kind set brings the gate): the loop awaits them.
    if (!base || request.taken || request.check || this.gate)
      return this.loop(request, 0, base?.snapshot, base?.origin === 'reducer');
    const current = base.snapshot;
    let next: Snapshot;
    let transitions: readonly LogEntry[];
    try {
      ({ next, transitions } = this.fold(
        request,
        current,
        this.registry.forSnapshot(current),
        base.origin === 'reducer',
      ));
    } catch (e) {
      return Promise.reject(e);
    }
    if (next === current) return Promise.resolve(current);
    return this.store.save(next, current.version).then(
      () => this.saved(request, current, next, transitions),
      (e: unknown) => this.lost(request, e, 0).then(() => this.loop(request, 1, undefined, false)),
    );
  }

  /**
   * After try `tries` (from 0) of a write failed with `e`: rethrows unless `e` is a lost race the
   * write may re-apply; else counts it and waits a jittered pause (so racing runners stop
   * colliding in lockstep) before the next try reloads.
   */
  private lost(request: WriteRequest, e: unknown, tries: number): Promise<void> {
    // A worker's tick from what it took: after a lost race the caller takes it again.
    // A handler's result is worth waiting for: lost, its task waits out its deadline and runs
    // again. Two workers feeding one hot instance (a map's parent) take turns, so results get ten
    // times the retries, with longer pauses.
    const allowed =
      request.onConflict === 'fail' || request.taken?.race
        ? 0
        : request.merge
          ? this.maxConflicts * 10
          : this.maxConflicts;
    if (!isStepfoldError(e, 'VERSION_CONFLICT')) throw e;
    const kind = raceKind(request);
    this.stats.lostRaces[kind] = (this.stats.lostRaces[kind] ?? 0) + 1;
    if (tries >= allowed) throw e;
    this.stats.conflicts++;
    const cap = request.merge ? 100 : 50;
    return new Promise((r) => setTimeout(r, Math.random() * Math.min(cap, 2 ** tries)));
  }

  /** After a successful save: counted, remembered as the instance's newest, reported. */
  private saved(
    request: WriteRequest,
    current: Snapshot,
    next: Snapshot,
    transitions: readonly LogEntry[],
  ): Snapshot {
    this.stats.writes++;
    this.queue.wrote(next);
    request.onWrite(next, transitions, current.version, current.wakeAt);
    return next;
  }

  /**
   * The request's events reduced on `current`: what a worker's tick applies first (its sent
   * signals), then its event, then the results merged after it, in order. A merged result the
   * reducer refuses for good is reported and skipped.
   */
  private fold(
    request: WriteRequest,
    current: Snapshot,
    definition: WorkflowDefinition,
    trusted: boolean,
  ): { next: Snapshot; transitions: readonly LogEntry[] } {
    let from = current;
    let transitions: readonly LogEntry[] = [];
    if (request.taken)
      ({ from, transitions, trusted } = request.taken.before(
        current,
        (s, e, t) => reduce(definition, s, this.mark(e), this.options(t)),
        trusted,
      ));
    // A refusal counts for the try that makes the write: a lost race re-applies every result.
    request.refused?.(undefined);
    if (request.also) for (const m of request.also) m.refused(undefined);
    let r: ReturnType<typeof reduce>;
    try {
      r = reduce(definition, from, this.mark(request.event(this.clock())), this.options(trusted));
    } catch (e) {
      // With merged results, a refused first one is reported alone; else the write fails.
      if (!request.refused || !request.also?.length || !isStepfoldError(e) || e.retryable) throw e;
      request.refused(e);
      r = { snapshot: from, transitions: [] };
    }
    let next = r.snapshot;
    transitions = transitions.length ? [...transitions, ...r.transitions] : r.transitions;
    if (request.also?.length) {
      for (const m of request.also) {
        try {
          const more = reduce(definition, next, this.mark(m.event(this.clock())), this.reducingTrusted);
          next = more.snapshot;
          if (more.transitions.length) transitions = [...transitions, ...more.transitions];
        } catch (e) {
          if (!isStepfoldError(e) || e.retryable) throw e;
          m.refused(e);
        }
      }
    }
    return { next, transitions };
  }

  /** The write's loop from try `tries` on `current` (loaded first when undefined), re-applied on a lost race. */
  private async loop(
    request: WriteRequest,
    tries: number,
    current: Snapshot | undefined,
    trusted: boolean,
  ): Promise<Snapshot> {
    const { id, taken } = request;
    for (; ; tries++) {
      if (!current) {
        current = await this.load(id);
        trusted = false;
      }
      const definition = this.registry.forSnapshot(current);
      await request.check?.(current, definition);
      let { next, transitions } = this.fold(request, current, definition, trusted);
      if (next === current) {
        await taken?.unchanged(current, this.store);
        return current;
      }
      const from = current;
      const saveOptions = taken?.save(from);
      try {
        ({ next, transitions } = await this.gated(
          from,
          next,
          transitions,
          definition,
          (n) => this.store.save(n, from.version, saveOptions),
          // A save that consumes or matches carries no flow work: the flow calls do it alone then.
          saveOptions ? undefined : (n, flow) => this.store.save(n, from.version, { flow }),
        ));
      } catch (e) {
        await this.lost(request, e, tries);
        current = undefined;
        continue;
      }
      return this.saved(request, current, next, transitions);
    }
  }

  /** The reduce options for a snapshot `trusted` or not. */
  private options(trusted: boolean): ReduceOptions {
    return trusted ? this.reducingTrusted : this.reducing;
  }

  /**
   * Writes `next` (over `prev`) with `save`; through the flow gate when the write touches flow
   * limits (acquired before, a refusal folded into `next`, released after), else as it is.
   */
  private gated(
    prev: Snapshot | null,
    next: Snapshot,
    transitions: readonly LogEntry[],
    definition: WorkflowDefinition,
    save: (next: Snapshot) => Promise<unknown>,
    saveWith?: (next: Snapshot, flow: SaveFlow) => Promise<unknown>,
  ): Promise<{ next: Snapshot; transitions: readonly LogEntry[] }> {
    if (!this.gate) return save(next).then(() => ({ next, transitions }));
    return this.gate.save(
      prev,
      next,
      transitions,
      save,
      (s, e) => reduce(definition, s, this.mark(e), this.reducingTrusted),
      saveWith,
    );
  }

  /**
   * A create that takes its one flow holder in the same write: resolves true when the store
   * confirmed the take (see `CreateFlow.taken`).
   */
  private readonly createWith = (next: Snapshot, flow: SaveFlow): Promise<boolean> => {
    let took = false;
    const taken = () => {
      took = true;
    };
    return this.store.create(next, { flow: { take: flow.take!, now: flow.now, taken } }).then(() => took);
  };

  /** The event as this runner writes it: its tasks queued for a worker when it hands them off. */
  private mark(event: WorkflowEvent): WorkflowEvent {
    return this.handoff ? { ...event, handoff: true } : event;
  }

  /** One create: the start (and `alsoApply`) reduced, then created, or saved over a finished instance of the id. */
  private async insert(request: CreateRequest): Promise<Snapshot> {
    const { alsoApply, trace, parent, onWrite } = request;
    const { id, reuseFinished, schedule, priority } = request.instance;
    assertValidId(id);
    if (priority !== undefined && !isPriority(priority))
      throw new ValidationError('INVALID_OPTIONS', 'invalid start options', [
        { path: 'priority', message: `must be an integer from 0 to ${MAX_PRIORITY}` },
      ]);
    const definition = this.registry.resolve(request.instance.workflow, request.instance.version);
    const schema = request.unchecked ? undefined : declaredSchemas(definition)?.input;
    if (schema) await checkDeclared(schema, request.instance.input, 'input');
    // Checked as given, stored as written: over the threshold, a reference under the new id.
    const input = this.payloads
      ? await this.payloads.offload(id, request.instance.input)
      : request.instance.input;
    // The start and `alsoApply` are written together: the transitions of both are reported.
    let transitions: readonly LogEntry[] = [];
    const fold = (from: Snapshot | null, e: WorkflowEvent) => {
      const r = reduce(definition, from, e, this.reducing);
      transitions = [...transitions, ...r.transitions];
      return r.snapshot;
    };
    const started = (from: Snapshot | null, reuse: boolean) => {
      // Built by assignment, not spreads: this runs for every start.
      const e: Record<string, unknown> = { type: 'start', at: this.clock(), id, input };
      if (reuse) e['reuse'] = reuse;
      if (trace) e['trace'] = trace;
      if (parent) e['parent'] = parent;
      if (schedule) e['schedule'] = schedule;
      if (priority !== undefined) e['priority'] = priority;
      if (this.handoff) e['handoff'] = true;
      const s = fold(from, e as unknown as WorkflowEvent);
      return alsoApply ? fold(s, this.handoff ? { ...alsoApply, handoff: true } : alsoApply) : s;
    };
    // Instance limits (and limited first attempts) are asked of the store before the create, or,
    // where the store takes them in the create (`flow.inCreate`), a first attempt's with it.
    let s = started(null, false);
    let before = 0;
    try {
      ({ next: s, transitions } = await this.gated(
        null,
        s,
        transitions,
        definition,
        (n) => this.store.create(n),
        this.createWith,
      ));
    } catch (e) {
      if (!isStepfoldError(e, 'ALREADY_EXISTS') || !reuseFinished) throw e;
      const old = await loadInstance(this.store, id);
      if (!old || !isTerminal(old.status)) throw e;
      transitions = [];
      before = old.version;
      try {
        ({ next: s, transitions } = await this.gated(old, started(old, true), transitions, definition, (n) =>
          this.store.save(n, old.version),
        ));
      } catch (conflict) {
        // A finished instance takes no events: whoever changed it reused the id first.
        if (isStepfoldError(conflict, 'VERSION_CONFLICT')) throw new AlreadyExistsError(id);
        throw conflict;
      }
    }
    this.stats.writes++;
    this.queue.wrote(s);
    onWrite(s, transitions, before, null);
    return s;
  }
}
