import { hasLimits } from '../definition/flow-limits.js';
import type { WorkflowDefinition } from '../definition/schema.js';
import { isStepfoldError, ValidationError } from '../errors.js';
import type { WorkflowEvent } from '../events.js';
import type { FlowCounterRef, FlowNeed } from '../flow-need.js';
import type { Reduction } from '../reducer/reducer.js';
import type { LogEntry, Snapshot } from '../snapshot.js';
import type { FlowStore, SaveFlow } from '../store/flow.js';
import type { Store } from '../store/store.js';
import {
  type FlowAcquire,
  type FlowChanges,
  flowChanges,
  needCounters,
  refusalEvent,
  touchesFlow,
  uniqueCounters,
} from './flow-changes.js';
import type { FlowGateOptions, FlowGatePort, Gated } from './flow-port.js';

/**
 * The latest a refused holder is tried again: the store's time when sooner (a rate window that
 * slides, a lease that lapses). A released slot ticks it sooner; this is only the poll fallback,
 * which also bounds what a lost wake costs (a release that ticked the waiter just before its
 * refusal was saved, in another process).
 */
export const FLOW_RETRY_MS = 30_000;

/** When a refused holder is tried again at the latest: the store's time, or {@link FLOW_RETRY_MS} from now if sooner. */
export function retryAt(until: number | null, now: number): number {
  return Math.min(until ?? Number.POSITIVE_INFINITY, now + FLOW_RETRY_MS);
}

const ignore = () => {};

/**
 * The runner's side of the store's `flow`: before a save it acquires what the write dispatched
 * (a refusal is folded into the same write as `task.throttled` or `instance.throttled`; an
 * admission granted as `instance.admitted`); after the save it releases what the write ended and
 * ticks the instances that waited for it; after a failed save it gives back what it took.
 */
export class FlowGate implements FlowGatePort {
  constructor(
    private readonly flow: FlowStore,
    private readonly clock: () => number,
    /** Ticks instances that waited for a slot that just freed (not awaited by the write). */
    private readonly wake: (ids: readonly string[]) => void,
    /** The instance as stored now: what a failed write gives back depends on it. */
    private readonly stored: (id: string) => Promise<Snapshot | null>,
  ) {}

  /**
   * Acquires every holder `next` needs beyond `prev`, folding each answer into the snapshot with
   * `fold`, until the snapshot asks for nothing new (an admission granted enters the first step,
   * which may dispatch limited attempts). A store failure gives back what was taken, then throws.
   * Also answers the write's changes as saved (computed once per pass, again only after a fold).
   */
  async acquire(
    prev: Snapshot | null,
    next: Snapshot,
    transitions: readonly LogEntry[],
    fold: (s: Snapshot, e: WorkflowEvent) => Reduction,
    changes = flowChanges(prev, next),
  ): Promise<Gated & { changes: FlowChanges; takenOn: FlowCounterRef[] }> {
    const taken: string[] = [];
    // What the holders taken need: where a failed save gives them back.
    const takenNeeds: FlowNeed[] = [];
    // The waiter entries of attempts dispatched again go first, in this write's own time.
    const again = changes.redispatched;
    if (again.length) await this.flow.release(again, this.clock(), changes.redispatchedCounters);
    let todo = changes.acquire;
    if (todo.length === 0) return { next, transitions, taken, changes, takenOn: [] };
    const decided = new Set<string>();
    try {
      while (todo.length) {
        let folded = false;
        for (const a of todo) {
          decided.add(a.holder);
          const now = this.clock();
          const grant = await this.flow.acquire(a.holder, next.id, a.needs, now, a.until);
          if (grant.granted) {
            taken.push(a.holder);
            takenNeeds.push(...a.needs);
          }
          const ev = grant.granted
            ? a.task
              ? undefined
              : ({ type: 'instance.admitted', at: now } as const)
            : refusalEvent(a, grant.need, retryAt(grant.until, now), now);
          if (!ev) continue;
          const r = fold(next, ev);
          next = r.snapshot;
          folded = true;
          if (r.transitions.length) transitions = [...transitions, ...r.transitions];
        }
        // Nothing folded: the snapshot asks for what was just decided, nothing new.
        if (!folded) break;
        changes = flowChanges(prev, next);
        todo = changes.acquire.filter((a) => !decided.has(a.holder));
      }
    } catch (e) {
      this.giveBack(next.id, taken, needCounters(takenNeeds));
      throw e;
    }
    return { next, transitions, taken, changes, takenOn: needCounters(takenNeeds) };
  }

  /**
   * Saves `next` with `save` between the acquire and the release (see {@link FlowGatePort.save}).
   * A create (`prev` null) goes with its one holder (an attempt's, or its admission's, folded as
   * granted) through `saveWith` on a store whose `flow.inCreate` is true; its `saveWith` resolves
   * `true` when the store confirmed the take.
   */
  async save(
    prev: Snapshot | null,
    next: Snapshot,
    transitions: readonly LogEntry[],
    save: (next: Snapshot) => Promise<unknown>,
    fold: (s: Snapshot, e: WorkflowEvent) => Reduction,
    saveWith?: (next: Snapshot, flow: SaveFlow) => Promise<unknown>,
  ): Promise<Gated> {
    if (!touchesFlow(prev, next)) {
      await save(next);
      return { next, transitions, taken: [] };
    }
    let changes = flowChanges(prev, next);
    const creating = prev === null;
    const able = creating ? this.flow.inCreate && !this.unconfirmed : this.flow.inSave;
    const inSave = saveWith && able ? saveWith : undefined;
    if (inSave && !changes.redispatched.length) {
      // The one holder this write dispatches goes with the save (a grant folds nothing, so the
      // snapshot saved is the one asked about), and so does what it ends; a refusal wrote nothing
      // and is asked alone below.
      const one = takenAlone(changes);
      if (creating && !one) {
        const admitted = await this.admittedInCreate(next, transitions, changes, fold, inSave);
        if (admitted) return admitted;
      } else if (creating ? one : one || !changes.acquire.length) {
        const saved = await this.saveTaking(creating, next, transitions, changes, one, inSave);
        if (saved) return saved;
      }
    }
    const g = await this.acquire(prev, next, transitions, fold, changes);
    changes = g.changes;
    try {
      // A create releases nothing: after a refusal it is the plain create.
      await (inSave && !creating ? inSave(g.next, this.saveFlow(changes, undefined)) : save(g.next));
    } catch (e) {
      this.giveBack(next.id, g.taken, g.takenOn);
      throw e;
    }
    if (!inSave && changes.release.length) this.release(changes.release, changes.releaseCounters);
    this.renewed(changes);
    return { next: g.next, transitions: g.transitions, taken: g.taken };
  }

  /**
   * A create whose one holder is its admission (an instance limit; no limited first attempt):
   * the admission is folded as granted and its holder taken in the create, one round trip where
   * acquire-then-create is two. Undefined when the admitted snapshot asks for more than that
   * holder, or when the store refused (it wrote nothing: the caller asks alone, as for attempts).
   */
  private async admittedInCreate(
    next: Snapshot,
    transitions: readonly LogEntry[],
    changes: FlowChanges,
    fold: (s: Snapshot, e: WorkflowEvent) => Reduction,
    inSave: (next: Snapshot, flow: SaveFlow) => Promise<unknown>,
  ): Promise<Gated | undefined> {
    const [ask] = changes.acquire;
    if (changes.acquire.length !== 1 || ask!.task || !ask!.needs.length) return undefined;
    const r = fold(next, { type: 'instance.admitted', at: this.clock() });
    const after = flowChanges(null, r.snapshot);
    const [one] = after.acquire;
    if (after.acquire.length !== 1 || one!.holder !== ask!.holder || after.release.length) return undefined;
    const all = r.transitions.length ? [...transitions, ...r.transitions] : transitions;
    return this.saveTaking(true, r.snapshot, all, after, one, inSave);
  }

  /**
   * Saves (or creates) `next` with its flow work in the same write: `one` taken, what `changes`
   * ends released. Undefined when the store refused the take (it wrote nothing: the caller asks
   * alone); a create whose take the store did not confirm acquires it after (see unconfirmedTake).
   */
  private async saveTaking(
    creating: boolean,
    next: Snapshot,
    transitions: readonly LogEntry[],
    changes: FlowChanges,
    one: FlowAcquire | undefined,
    inSave: (next: Snapshot, flow: SaveFlow) => Promise<unknown>,
  ): Promise<Gated | undefined> {
    try {
      const confirmed = await inSave(next, this.saveFlow(changes, one));
      if (creating && confirmed !== true) return await this.unconfirmedTake(next, transitions, one!);
      this.renewed(changes);
      return { next, transitions, taken: one ? [one.holder] : [] };
    } catch (e) {
      if (isStepfoldError(e, 'FLOW_REFUSED')) return undefined;
      throw e;
    }
  }

  /** Set once a create with its take resolved without the store's word: later creates acquire first. */
  private unconfirmed = false;

  /**
   * A create the store wrote without confirming its take (a wrapper that dropped
   * `CreateOptions.flow`): the holder is acquired now. Refused, the instance runs an attempt with no
   * slot: its waiter entry is dropped and the create rejects (`INVALID_OPTIONS` naming the wrapper's fault).
   */
  private async unconfirmedTake(
    next: Snapshot,
    transitions: readonly LogEntry[],
    one: FlowAcquire,
  ): Promise<Gated> {
    this.unconfirmed = true;
    const grant = await this.flow.acquire(one.holder, next.id, one.needs, this.clock(), one.until);
    if (grant.granted) return { next, transitions, taken: [one.holder] };
    this.release([one.holder], needCounters(one.needs));
    throw new ValidationError('INVALID_OPTIONS', 'invalid createRunner options', [
      {
        path: 'store.create',
        message: `store.create wrote ${next.id} without taking flow holder ${one.holder}: a store wrapper must pass CreateOptions.flow on, or not copy flow.inCreate`,
      },
    ]);
  }

  /**
   * What a save does to the counts in its own write: takes `one`, releases what the write ended
   * (on the counters the write's snapshots name for it).
   */
  private saveFlow(changes: FlowChanges, one: FlowAcquire | undefined): SaveFlow {
    const { release } = changes;
    return {
      now: this.clock(),
      take: one && { holder: one.holder, needs: one.needs, until: one.until },
      release,
      ...(release.length ? { counters: changes.releaseCounters } : {}),
      woken: this.woken,
    };
  }

  /** Ticks the instances a save's release names (each once). */
  private readonly woken = (ids: readonly string[]): void => {
    if (ids.length) this.wake([...new Set(ids)]);
  };

  /**
   * After a failed write: the holders it took are released (waiters they held off are ticked),
   * except those the instance as stored holds. A holder is one per attempt, and the store grants
   * a holder that holds already again: two writers of one instance that reduced the same version
   * both take its attempt's holder, and the one whose save lost must not free the slot of the
   * attempt the other saved and runs. When the instance cannot be read, all are released.
   * `counters`: where the holders were taken (undefined: unknown, the store looks everywhere).
   */
  giveBack(id: string, taken: readonly string[], counters?: FlowCounterRef[]): void {
    if (!taken.length) return;
    this.stored(id).then(
      (s) => {
        const held = new Set(s ? flowChanges(null, s).acquire.map((a) => a.holder) : []);
        const free = taken.filter((h) => !held.has(h));
        if (free.length) this.release(free, counters);
      },
      () => this.release(taken, counters),
    );
  }

  /** After a successful save: moved leases renewed (on the counters the attempts hold them on). */
  private renewed({ renew }: FlowChanges): void {
    if (renew.length === 0) return;
    const byUntil = new Map<number, { holders: string[]; needs: FlowCounterRef[] }>();
    for (const r of renew) {
      const group = byUntil.get(r.until);
      if (group) {
        group.holders.push(r.holder);
        group.needs.push(...r.counters);
      } else byUntil.set(r.until, { holders: [r.holder], needs: [...r.counters] });
    }
    for (const [until, { holders, needs }] of byUntil)
      this.flow.renew(holders, until, uniqueCounters(needs)).catch(ignore);
  }

  /**
   * Releases holders (on `counters`, where known) and ticks the waiters the store names; a failure
   * leaves it to the leases.
   */
  private release(holders: readonly string[], counters: FlowCounterRef[] | undefined): void {
    this.flow.release(holders, this.clock(), counters).then((ids) => {
      if (ids.length) this.wake([...new Set(ids)]);
    }, ignore);
  }
}

/**
 * The one holder a write acquires when it can go with the save: an attempt (its grant folds no
 * event) and nothing dispatched again (whose waiter entries are released first).
 */
function takenAlone(changes: FlowChanges): FlowAcquire | undefined {
  const [one] = changes.acquire;
  const alone =
    changes.acquire.length === 1 && one!.task && one!.needs.length && !changes.redispatched.length;
  return alone ? one : undefined;
}

/**
 * The runner's flow gate (what `flowControl` brings): refuses a limited definition on a store
 * without `flow`; none when the store counts nothing. A released slot ticks its waiters through
 * the runner.
 */
export function flowGate({ store, clock, registry, tick }: FlowGateOptions): FlowGatePort | undefined {
  checkFlow(store, registry.all());
  if (!store.flow) return undefined;
  const wake = (id: string, tries: number): void => {
    tick(id).catch((e: unknown) => {
      // A waiter's first write (its create) may still be on its way: tried again shortly.
      if (isStepfoldError(e, 'NOT_FOUND') && tries < 5)
        setTimeout(() => wake(id, tries + 1), 20 * 2 ** tries);
    });
  };
  return new FlowGate(
    store.flow,
    clock,
    (ids) => {
      for (const id of ids) wake(id, 0);
    },
    (id) => store.load(id),
  );
}

/**
 * Flow limits are counted by the store: a definition with any (`concurrency`, `rateLimit`) needs a
 * store with `flow`, refused here (`INVALID_OPTIONS`, naming the workflow, step and store) rather
 * than run unlimited.
 */
function checkFlow(store: Store, definitions: readonly WorkflowDefinition[]): void {
  if (store.flow) return;
  const issues: Array<{ path: string; message: string }> = [];
  const name =
    store.constructor?.name && store.constructor.name !== 'Object' ? store.constructor.name : 'the store';
  for (const def of definitions) {
    if (hasLimits(def))
      issues.push({
        path: `workflows.${def.name}`,
        message: `workflow ${def.name} v${def.version} has concurrency limits, but ${name} has no flow capability to count them`,
      });
    for (const step of Object.values(def.steps)) {
      if (hasLimits(step as Parameters<typeof hasLimits>[0]))
        issues.push({
          path: `workflows.${def.name}.steps.${step.id}`,
          message: `step ${step.id} of workflow ${def.name} v${def.version} has flow limits, but ${name} has no flow capability to count them`,
        });
    }
  }
  if (issues.length) throw new ValidationError('INVALID_OPTIONS', 'invalid createRunner options', issues);
}
