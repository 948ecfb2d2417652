import { checkDeclared, declaredSchemas } from '../definition/declared-schemas.js';
import type { WorkflowDefinition } from '../definition/schema.js';
import { AlreadyExistsError, isStepfoldError, NotFoundError, VersionConflictError } from '../errors.js';
import type { WorkflowEvent } from '../events.js';
import { assertValidId } from '../ids.js';
import { reduce } from '../reducer/reducer.js';
import { isTerminal, type LogEntry, type Snapshot } from '../snapshot.js';
import type { SentSignal, Store } from '../store/store.js';
import { InstanceWrites } from './instance-writes.js';
import type { EventInfo, Instrumentation } from './instrumentation.js';
import type { WorkflowRegistry } from './registry.js';

/**
 * Called after each successful write with the snapshot written, the transitions it recorded, the
 * version the store held before (0 for a new instance: a write may span several versions), and
 * the wake time the instance had before it (null for a new one).
 */
export type OnWrite = (
  snapshot: Snapshot,
  transitions: readonly LogEntry[],
  before: number,
  dueAt: number | null,
) => void;

/**
 * Signals waiting in the store's inbox for the instance, to apply before the event; `refused` is
 * told of each the reducer refuses for good (its inbox full, say): skipped, and consumed all the same.
 */
export interface SentBatch {
  signals: readonly SentSignal[];
  refused(error: unknown): void;
}

/** May refuse an event for the snapshot it would apply to (a signal's declared payload schema). */
type Check = (current: Snapshot, definition: WorkflowDefinition) => Promise<void>;

/** Runs `work` (one event's write) inside the instrumentation's wrapper, telling it what was written. */
async function traced(
  ins: Instrumentation,
  info: EventInfo,
  onWrite: OnWrite,
  work: (onWrite: OnWrite) => Promise<Snapshot>,
): Promise<Snapshot> {
  let before: number | undefined;
  const out = await ins.event(info, async () => {
    const snapshot = await work((s, transitions, from, dueAt) => {
      before = from;
      onWrite(s, transitions, from, dueAt);
    });
    return { snapshot, applied: before !== undefined, versionBefore: before ?? snapshot.version };
  });
  return out.snapshot;
}

/**
 * The runner's writes: load → reduce → save conditional on the version, re-applied on a conflict
 * (jittered, up to `maxConflicts` times), and creating instances (reusing a finished id when
 * asked). Each successful write is reported to the `onWrite` of the call that made it.
 */
export class WriteLoop {
  constructor(
    private readonly store: Store,
    private readonly registry: WorkflowRegistry,
    private readonly clock: () => number,
    private readonly maxConflicts: number,
    /** Every event written says its tasks are queued for a worker (a runner that runs no handlers). */
    private readonly handoff = false,
    private readonly instrument?: Instrumentation,
  ) {}

  /** Successful writes and conflicts retried, for {@link Runner.stats}. */
  readonly stats = { writes: 0, conflicts: 0 };

  /**
   * Applies the event `make(now)` to the stored instance (or to `known`, a snapshot believed
   * current) and saves it; `check` may refuse the event for the snapshot it would apply to. Returns
   * the stored snapshot (the same one when the event did not apply). `known` is trusted (it came
   * out of this runner's reducer) unless `loaded` says it came from the store. With `reapply`
   * false a lost race is not reloaded and re-applied: the VERSION_CONFLICT is thrown at once.
   * `sent`: signals waiting in the store's inbox for `known`, applied first and consumed by the
   * same write (a lost race then always throws: the caller claims them again); one the reducer
   * refuses for good is skipped and reported to `sent.refused`.
   */
  apply(
    id: string,
    make: (now: number) => WorkflowEvent,
    onWrite: OnWrite,
    known?: Snapshot,
    check?: Check,
    loaded: boolean | 'notice' = false,
    reapply = true,
    sent?: SentBatch,
  ): Promise<Snapshot> {
    const ins = this.instrument;
    const conflicts = reapply && !sent ? this.maxConflicts : 0;
    return this.queue.run(id, known, (current, fresh) => {
      // Sent signals were claimed with `known`: a newer snapshot this runner wrote since may have
      // applied some of them already. Not applied twice: the caller claims them again, as after a lost race.
      if (sent && fresh && known && current)
        return Promise.reject(new VersionConflictError(id, known.version, current.version));
      const trusted = current !== undefined && (fresh || !loaded);
      // A snapshot from a wake notice is taken only if it is exactly the one stored.
      const noticed = loaded === 'notice' && !fresh ? current : undefined;
      if (!ins) return this.write(id, make, onWrite, current, trusted, check, conflicts, sent, noticed);
      return this.applyTraced(ins, id, make, onWrite, current, trusted, check, conflicts, sent, noticed);
    });
  }

  /** This runner's writes per instance, one at a time, each from the newest snapshot it wrote. */
  private readonly queue = new InstanceWrites();

  /** {@link apply} inside the instrumentation's event wrapper. */
  private async applyTraced(
    ins: Instrumentation,
    id: string,
    make: (now: number) => WorkflowEvent,
    onWrite: OnWrite,
    known: Snapshot | undefined,
    trusted: boolean,
    check: Check | undefined,
    conflicts: number,
    sent: SentBatch | undefined,
    noticed: Snapshot | undefined,
  ): Promise<Snapshot> {
    // Loaded before the wrapper is called, so it is told the workflow, version and trace it applies to.
    const current = known ?? (await this.load(id));
    const info: EventInfo = {
      instanceId: id,
      type: make(0).type, // `make` varies with the time only: called once more for the type
      workflow: current.workflow,
      version: current.version,
      trace: current.trace,
    };
    return traced(ins, info, onWrite, (w) =>
      this.write(id, make, w, current, trusted, check, conflicts, sent, noticed),
    );
  }

  private async load(id: string): Promise<Snapshot> {
    const loaded = await this.store.load(id);
    if (!loaded) throw new NotFoundError(id);
    return loaded;
  }

  /** {@link apply} without instrumentation; `trusted`: `current` came out of this runner's reducer. */
  private async write(
    id: string,
    make: (now: number) => WorkflowEvent,
    onWrite: OnWrite,
    current: Snapshot | undefined,
    trusted: boolean,
    check: Check | undefined,
    /** Lost races reloaded and re-applied before the conflict is thrown. */
    conflicts: number,
    sent?: SentBatch,
    /** `current` as a wake notice gave it: the write must find exactly it (and `sent`) stored. */
    noticed?: Snapshot,
  ): Promise<Snapshot> {
    for (let tries = 0; ; tries++) {
      if (!current) {
        current = await this.load(id);
        trusted = false;
      }
      const definition = this.registry.forSnapshot(current);
      await check?.(current, definition);
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
      const r = reduce(definition, from, this.mark(make(this.clock())), {}, true, trusted);
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

  /**
   * Creates and starts an instance, with `extra` applied in the same write (a signal that starts
   * it). With `reuseFinished`, a finished instance of that id is started over instead; if someone
   * else got there first the result is `ALREADY_EXISTS`.
   */
  create(
    workflow: string,
    id: string,
    input: unknown,
    options: { version?: number | undefined; reuseFinished?: boolean | undefined },
    onWrite: OnWrite,
    extra?: WorkflowEvent,
  ): Promise<Snapshot> {
    const ins = this.instrument;
    if (!ins) return this.insert(workflow, id, input, options, onWrite, extra, undefined);
    return this.createTraced(ins, workflow, id, input, options, onWrite, extra);
  }

  /** {@link create} inside the instrumentation's event wrapper. */
  private async createTraced(
    ins: Instrumentation,
    workflow: string,
    id: string,
    input: unknown,
    options: { version?: number | undefined; reuseFinished?: boolean | undefined },
    onWrite: OnWrite,
    extra: WorkflowEvent | undefined,
  ): Promise<Snapshot> {
    const definition = this.registry.resolve(workflow, options.version);
    const info: EventInfo = { instanceId: id, type: 'start', workflow: definition, version: 0 };
    // Asked inside the wrapper: a span it made active is the trace the instance carries.
    return traced(ins, info, onWrite, (w) =>
      this.insert(workflow, id, input, options, w, extra, ins.carrier()),
    );
  }

  /** {@link create}, the start event carrying `trace`. */
  private async insert(
    workflow: string,
    id: string,
    input: unknown,
    options: { version?: number | undefined; reuseFinished?: boolean | undefined },
    onWrite: OnWrite,
    extra: WorkflowEvent | undefined,
    trace: Record<string, string> | undefined,
  ): Promise<Snapshot> {
    assertValidId(id);
    const definition = this.registry.resolve(workflow, options.version);
    const schema = declaredSchemas(definition)?.input;
    if (schema) await checkDeclared(schema, input, 'input');
    // Start and the extra event are written together: the transitions of both are reported.
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
        ...mark,
      });
      return extra ? fold(s, { ...extra, ...mark }) : s;
    };
    let s = started(null, false);
    let before = 0;
    try {
      await this.store.create(s);
    } catch (e) {
      if (!isStepfoldError(e, 'ALREADY_EXISTS') || !options.reuseFinished) throw e;
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
