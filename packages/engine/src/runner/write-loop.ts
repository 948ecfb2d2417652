import { checkDeclared, declaredSchemas } from '../definition/declared-schemas.js';
import { AlreadyExistsError, isStepfoldError, NotFoundError, VersionConflictError } from '../errors.js';
import type { WorkflowEvent } from '../events.js';
import { assertValidId } from '../ids.js';
import { reduce } from '../reducer/reducer.js';
import { isTerminal, type LogEntry, type Snapshot } from '../snapshot.js';
import type { Store } from '../store/store.js';
import { InstanceWrites } from './instance-writes.js';
import type { Instrumentation } from './instrumentation.js';
import type { WorkflowRegistry } from './registry.js';
import { tracedCreate, tracedWrite } from './traced.js';
import type { Create, CreateRequest, Write, WriteRequest } from './write-request.js';

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
  instrument?: Instrumentation | undefined;
}

/**
 * The runner's writes: load → reduce → save conditional on the version, re-applied on a conflict
 * (jittered, up to `conflictRetries` times), and creating instances (reusing a finished id when
 * asked). Each successful write is reported to the `onWrite` of the call that made it.
 */
export class WriteLoop {
  private readonly store: Store;
  private readonly registry: WorkflowRegistry;
  private readonly clock: () => number;
  private readonly maxConflicts: number;
  private readonly handoff: boolean;
  /** This runner's writes per instance, one at a time, each from the newest snapshot it wrote. */
  private readonly queue = new InstanceWrites();

  /** Successful writes and conflicts retried, for {@link Runner.stats}. */
  readonly stats = { writes: 0, conflicts: 0 };

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
    // Tracing is decided here, once: wrapped or raw, the calls below never ask again.
    const raw: Write = (r) => this.write(r);
    const insert: Create = (r) => this.insert(r);
    const ins = o.instrument;
    const write = ins ? tracedWrite(ins, (id) => this.load(id), raw) : raw;
    this.apply = (r) =>
      this.queue.run(r.id, r.base, (base) =>
        // Sent signals were claimed with the request's base: a newer snapshot this runner wrote
        // since may have applied some already. Never twice: the caller claims them again.
        r.sent && base !== r.base
          ? Promise.reject(new VersionConflictError(r.id, r.base!.snapshot.version, base!.snapshot.version))
          : write({ ...r, base }),
      );
    this.create = ins ? tracedCreate(ins, o.registry, insert) : insert;
  }

  /** The stored instance; NOT_FOUND if there is none. */
  private async load(id: string): Promise<Snapshot> {
    const loaded = await this.store.load(id);
    if (!loaded) throw new NotFoundError(id);
    return loaded;
  }

  /** One event's write: load (unless given a base) → reduce → save conditional on the version, re-applied on a lost race. */
  private async write(request: WriteRequest): Promise<Snapshot> {
    const { id, sent, onWrite } = request;
    // Sent signals were claimed for the base: after a lost race the caller claims them again.
    const conflicts = request.onConflict !== 'fail' && !sent ? this.maxConflicts : 0;
    let current = request.base?.snapshot;
    let trusted = request.base?.origin === 'reducer';
    // A notice's snapshot is taken only if it is exactly the one stored (a forged one changes nothing).
    const noticed = request.base?.origin === 'notice' ? current : undefined;
    for (let tries = 0; ; tries++) {
      if (!current) {
        current = await this.load(id);
        trusted = false;
      }
      const definition = this.registry.forSnapshot(current);
      await request.check?.(current, definition);
      // Sent signals first, in the order sent: they were written before this event.
      let from = current;
      let transitions: readonly LogEntry[] = [];
      if (sent)
        for (const { event } of sent.signals) {
          let r: ReturnType<typeof reduce>;
          try {
            r = reduce(definition, from, this.mark(event), {}, true, trusted);
          } catch (e) {
            // Refused for good (an overflowing inbox, a name no step knows): the others still apply.
            if (!isStepfoldError(e) || e.retryable) throw e;
            sent.refused(e);
            continue;
          }
          from = r.snapshot;
          trusted = true; // checked by that call (or made by it)
          transitions = [...transitions, ...r.transitions];
        }
      const r = reduce(definition, from, this.mark(request.event(this.clock())), {}, true, trusted);
      const next = r.snapshot;
      transitions = transitions.length ? [...transitions, ...r.transitions] : r.transitions;
      const consumed = sent?.signals;
      const matches = noticed === current ? noticed : undefined;
      if (next === current) {
        // Nothing applied (a finished instance, duplicate ids): the signals are spent all the same.
        // Not those a notice listed: unverified, they are left to the inbox's own claim.
        if (consumed?.length && !matches)
          await this.store.inbox?.drop(
            id,
            consumed.map((p) => p.seq),
            current.version,
          );
        return current;
      }
      try {
        await this.store.save(next, current.version, {
          ...(consumed?.length ? { consumed } : {}),
          ...(matches ? { matches } : {}),
        });
      } catch (e) {
        if (!isStepfoldError(e, 'VERSION_CONFLICT') || tries >= conflicts) throw e;
        this.stats.conflicts++;
        current = undefined;
        // Jittered pause so racing runners stop colliding in lockstep.
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 ** tries)));
        continue;
      }
      this.stats.writes++;
      this.queue.wrote(next);
      onWrite(next, transitions, current.version, current.wakeAt);
      return next;
    }
  }

  /** The event as this runner writes it: its tasks queued for a worker when it hands them off. */
  private mark(event: WorkflowEvent): WorkflowEvent {
    return this.handoff ? { ...event, handoff: true } : event;
  }

  /** One create: the start (and `alsoApply`) reduced, then created, or saved over a finished instance of the id. */
  private async insert(request: CreateRequest): Promise<Snapshot> {
    const { alsoApply, trace, parent, onWrite } = request;
    const { id, input, reuseFinished } = request.instance;
    assertValidId(id);
    const definition = this.registry.resolve(request.instance.workflow, request.instance.version);
    const schema = request.unchecked ? undefined : declaredSchemas(definition)?.input;
    if (schema) await checkDeclared(schema, input, 'input');
    // The start and `alsoApply` are written together: the transitions of both are reported.
    let transitions: LogEntry[] = [];
    const fold = (from: Snapshot | null, e: WorkflowEvent) => {
      const r = reduce(definition, from, e);
      transitions = [...transitions, ...r.transitions];
      return r.snapshot;
    };
    const mark = this.handoff ? { handoff: true } : {};
    const started = (from: Snapshot | null, reuse: boolean) => {
      const s = fold(from, {
        type: 'start',
        at: this.clock(),
        id,
        input,
        ...(reuse ? { reuse } : {}),
        ...(trace ? { trace } : {}),
        ...(parent ? { parent } : {}),
        ...mark,
      });
      return alsoApply ? fold(s, { ...alsoApply, ...mark }) : s;
    };
    let s = started(null, false);
    let before = 0;
    try {
      await this.store.create(s);
    } catch (e) {
      if (!isStepfoldError(e, 'ALREADY_EXISTS') || !reuseFinished) throw e;
      const old = await this.store.load(id);
      if (!old || !isTerminal(old.status)) throw e;
      transitions = [];
      before = old.version;
      s = started(old, true);
      try {
        await this.store.save(s, old.version);
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
