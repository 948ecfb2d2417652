import { compileWorkflow } from '../definition/compile.js';
import { completedPivotOf } from '../definition/pivots.js';
import type { WorkflowDefinition } from '../definition/schema.js';
import { ERROR_KINDS, isStepfoldError, type StepfoldError } from '../errors.js';
import { parseEvent, type WorkflowEvent } from '../events.js';
import { taskView } from '../reducer/task-view.js';
import { CHILD_STOPPED } from '../reducer/transition-context.js';
import { isTerminal, type LogEntry, type ParentRef, type Snapshot, type TaskState } from '../snapshot.js';
import type { ChildEffectsOptions, ChildEffectsPort } from './child-port.js';
import { loadInstance } from './load.js';
import type { WorkflowRegistry } from './registry.js';
import type { OnWrite } from './write-request.js';

/** Why a child its parent stopped before it existed is created aborted. */
export const STOPPED_BEFORE_START = 'its parent stopped it before it started';

/**
 * The runner's side of child workflows: the effects the reducer asks for as data. A task whose
 * handler is `$child` is performed here (start the child, or find it started and read its end;
 * cancel it once detached; revert it for a compensation); a child's terminal write reports to its
 * parent; a parent's end stops the children it leaves running. Every effect may run again (after a
 * crash, or when a deadline dispatches the task anew): each is idempotent.
 */
export class ChildEffects implements ChildEffectsPort {
  constructor(private readonly o: ChildEffectsOptions) {}

  /** Performs a `$child` task that `s` dispatched. */
  async run(s: Snapshot, task: TaskState, onWrite: OnWrite): Promise<void> {
    const { writes, store } = this.o;
    const id = task.child!;
    const ref = parentRef(s, task);
    if (task.phase === 'compensate') {
      const child = await loadInstance(store, id);
      if (!child) return this.report(ref, missingChild(id), onWrite);
      // Reverted already (cancelled), or ended some other way a revert cannot undo (aborted while
      // reverting): its end answers. Only a completed child takes the revert.
      if (isTerminal(child.status) && child.status !== 'completed') return this.report(ref, child, onWrite);
      try {
        await writes.apply({ id, event: (at) => ({ type: 'revert', at }), onWrite });
      } catch (e) {
        if (!isStepfoldError(e)) throw e;
        const error = { message: e.message, code: e.code, retryable: false };
        return this.report(ref, { ...child, status: 'failed', error }, onWrite);
      }
      return;
    }
    const definition = this.o.registry.forSnapshot(s);
    const step = definition.steps[task.step] as { workflow: string; version?: number | undefined };
    if (task.detached) {
      const child = await this.stop(id, 'cancel', onWrite, { step, ref });
      if (child && isTerminal(child.status)) await this.report(ref, child, onWrite);
      return;
    }
    // The parent's references resolved: the child owns (and offloads) its own input.
    const data = this.o.payloads ? await this.o.payloads.resolveData(s) : s;
    const input = taskView(definition, data, task).input;
    try {
      await writes.create({
        instance: { workflow: step.workflow, version: step.version, id, input },
        parent: ref,
        ...(s.trace ? { trace: s.trace } : {}),
        onWrite,
      });
    } catch (e) {
      // The child can never start: its declared input schema refuses what the step maps, or this
      // runner does not register the workflow or version it names. The step fails now (left to the
      // deadline, it would be tried again for good).
      if (neverStarts(e)) return this.report(ref, refused(id, e), onWrite);
      if (!isStepfoldError(e, 'ALREADY_EXISTS')) throw e;
      const child = await loadInstance(store, id);
      if (!child) throw e;
      if (!sameParent(child.parent, ref)) {
        const message = `instance ${id} exists and is not this step's child`;
        const error = { message, code: 'CHILD_ID_TAKEN', retryable: false };
        return this.report(ref, { ...child, status: 'failed', error }, onWrite);
      }
      // Started before (a crash, or a deadline's second look): its end, if it has one.
      if (isTerminal(child.status)) await this.report(ref, child, onWrite);
    }
  }

  /** Whether a write has anything for {@link written} to do (checked on every write, so cheap). */
  concerns(s: Snapshot, transitions: readonly LogEntry[]): boolean {
    if (s.parent && isTerminal(s.status)) return true;
    if (!isTerminal(s.status)) return false;
    return transitions.some((t) => t.type === CHILD_STOPPED);
  }

  /** After a write: a child that ended reports to its parent; a parent that ended stops its children. */
  async written(s: Snapshot, transitions: readonly LogEntry[], onWrite: OnWrite): Promise<void> {
    const work: Promise<unknown>[] = [];
    if (s.parent && isTerminal(s.status)) work.push(this.report(s.parent, s, onWrite));
    for (const t of transitions) {
      if (t.type !== CHILD_STOPPED || t.detail === undefined || t.step === undefined) continue;
      const step = this.o.registry.forSnapshot(s).steps[t.step] as { workflow: string; version?: number };
      const ref: ParentRef = { id: s.id, workflow: s.workflow.name, step: t.step, key: t.detail };
      work.push(this.stop(t.detail, s.status === 'aborted' ? 'abort' : 'cancel', onWrite, { step, ref }));
    }
    await Promise.all(work);
  }

  /**
   * Cancels or aborts a child; resolves with it afterwards. A child not created yet (the effect that
   * starts it may still be on its way, or lost) is created ended — started and aborted in one write —
   * so a late start finds it there and starts nothing.
   */
  private async stop(
    id: string,
    how: 'cancel' | 'abort',
    onWrite: OnWrite,
    of: { step: { workflow: string; version?: number | undefined }; ref: ParentRef },
  ): Promise<Snapshot | null> {
    const { writes, store, clock } = this.o;
    try {
      return await writes.apply({ id, event: (at) => ({ type: how, at }), onWrite });
    } catch (e) {
      // Past its pivot: it goes on, and reports when it ends.
      if (isStepfoldError(e, 'PAST_PIVOT')) return loadInstance(store, id);
      if (!isStepfoldError(e, 'NOT_FOUND')) throw e;
    }
    try {
      const reason = STOPPED_BEFORE_START;
      return await writes.create({
        instance: { workflow: of.step.workflow, version: of.step.version, id, input: null },
        parent: of.ref,
        alsoApply: { type: 'abort', at: clock(), reason },
        unchecked: true,
        onWrite,
      });
    } catch (e) {
      // The start got there first after all: stop that one.
      if (!isStepfoldError(e, 'ALREADY_EXISTS')) throw e;
      return this.stop(id, how, onWrite, of);
    }
  }

  /** Tells the parent a child ended: through its inbox when a worker applies it, else written here. */
  private async report(ref: ParentRef, ended: Snapshot, onWrite: OnWrite): Promise<void> {
    const { store, registry, writes, clock, payloads } = this.o;
    // The parent keeps its own copy of what it references: deleting the child must not break it.
    const child =
      payloads && ended.output !== undefined
        ? { ...ended, output: await payloads.rehome(ref.id, ended.output) }
        : ended;
    const event = (at: number): WorkflowEvent => endedEvent(ref, child, registry, at);
    if (this.o.viaInbox() && store.inbox) {
      // One try to write it at once (a parent waiting on one child: no hop through the inbox); a
      // busy parent (a map's children ending together) takes it from its inbox, in batches.
      try {
        await writes.apply({ id: ref.id, event, onWrite, onConflict: 'fail' });
        return;
      } catch (e) {
        if (isStepfoldError(e, 'NOT_FOUND')) return;
        if (!isStepfoldError(e, 'VERSION_CONFLICT')) throw e;
      }
      const accept = registry
        .all()
        .filter((d) => d.name === ref.workflow)
        .map((d) => `${d.name}@${d.version}@${compileWorkflow(d).hash}`);
      // Queued, or the parent has finished (the write says so): nothing more to do either way.
      if (accept.length && (await store.inbox.send(ref.id, parseEvent(event(clock())), accept)) !== false)
        return;
    }
    try {
      await writes.apply({ id: ref.id, event, onWrite });
    } catch (e) {
      // The parent is gone, or runs a version this runner does not know: its deadline looks again.
      if (!isStepfoldError(e, 'NOT_FOUND')) throw e;
    }
  }
}

/** Where a child started by `task` of `s` reports. */
export function parentRef(s: Snapshot, task: TaskState): ParentRef {
  const ref: ParentRef = { id: s.id, workflow: s.workflow.name, step: task.step, key: task.idempotencyKey };
  if (task.item !== undefined) ref.item = task.item;
  if (task.phase === 'compensate') ref.phase = 'compensate';
  return ref;
}

/** Whether a child's recorded parent is the execution `b` names (same instance, step and key). */
export function sameParent(a: ParentRef | undefined, b: ParentRef): boolean {
  return a !== undefined && a.id === b.id && a.step === b.step && a.key === b.key;
}

/** A stand-in end for a child that does not exist: failed with `NOT_FOUND`. */
export function missingChild(id: string): Snapshot {
  return { id, status: 'failed', error: { message: `child ${id} not found`, code: 'NOT_FOUND' } } as Snapshot;
}

/** Whether starting a child failed for a reason no later try can change (its input, or the registry). */
function neverStarts(e: unknown): e is StepfoldError {
  return isStepfoldError(e) && (e.code === 'INVALID_INPUT' || ERROR_KINDS[e.code] === 'definition');
}

/** A stand-in end for a child its input schema refused: failed with that error, not retryable. */
export function refused(id: string, e: { message: string; code: string }): Snapshot {
  return { id, status: 'failed', error: { message: e.message, code: e.code, retryable: false } } as Snapshot;
}

/** The `child.ended` event a child's end makes for its parent (the harness sends the same). */
export function endedEvent(
  ref: ParentRef,
  child: Snapshot,
  registry: WorkflowRegistry,
  at: number,
): WorkflowEvent {
  const status = child.status as 'completed' | 'failed' | 'cancelled' | 'aborted';
  const ev: WorkflowEvent = {
    type: 'child.ended',
    at,
    step: ref.step,
    key: ref.key,
    child: child.id,
    status,
  };
  if (ref.item !== undefined) ev.item = ref.item;
  if (ref.phase) ev.phase = ref.phase;
  if (status === 'completed') {
    ev.output = child.output ?? null;
    if (pivotOf(child, registry)) ev.pivot = true;
  } else if (child.error) ev.error = { message: child.error.message, code: child.error.code };
  return ev;
}

function pivotOf(child: Snapshot, registry: WorkflowRegistry): boolean {
  if (!child.workflow) return false;
  let def: WorkflowDefinition;
  try {
    def = registry.forSnapshot(child);
  } catch {
    return false;
  }
  return completedPivotOf(compileWorkflow(def), child) !== undefined;
}
