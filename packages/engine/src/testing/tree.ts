import { declaredCheckOf, declaredProblem } from '../definition/declared-schemas.js';
import { isStepfoldError, type ValidationError } from '../errors.js';
import type { WorkflowEvent } from '../events.js';
import type { KindSet } from '../reducer/kind-table.js';
import { dispatchedBy, taskView } from '../reducer/task-view.js';
import { CHILD_STOPPED } from '../reducer/transition-context.js';
import {
  endedEvent,
  missingChild,
  parentRef,
  refused,
  STOPPED_BEFORE_START,
  sameParent,
} from '../runner/child-effects.js';
import type { AnyDefinition } from '../runner/handler-types.js';
import { createRegistry, type WorkflowRegistry } from '../runner/registry.js';
import {
  CHILD_HANDLER,
  isTerminal,
  type LogEntry,
  type ParentRef,
  type Snapshot,
  type TaskState,
} from '../snapshot.js';
import { FlowCounter } from './flow-counter.js';

// The harness's side of child workflows: the same effects the runner performs (runner/child-effects.ts),
// done synchronously on in-memory instances that share one fake clock. The decisions (which event,
// which parent reference, when a start finds its child) use the runner's own helpers.

/** An event whose `at` may be left to the fake clock. */
export type EventInput = WorkflowEvent extends infer E
  ? E extends { at: number }
    ? Omit<E, 'at'> & { at?: number }
    : never
  : never;

/** A child workflow effect a write asked for, as the harness queues it (see `HarnessOptions.effects`). */
export type ChildEffect =
  /** Perform a `$child` task `snapshot` dispatched: start the child (or read its end), cancel it once detached, revert it for a compensation. */
  | { kind: 'task'; instance: string; task: TaskState; snapshot: Snapshot }
  /** Report the end of a child (`snapshot`, as its terminal write left it) to its parent. */
  | { kind: 'report'; instance: string; to: ParentRef; snapshot: Snapshot }
  /** Stop (cancel, or abort) a child that the end of `instance` left running. */
  | {
      kind: 'stop';
      instance: string;
      child: string;
      how: 'cancel' | 'abort';
      ref: ParentRef;
      of: ChildOf;
    };

/** The workflow (and version) a child step or workflow map starts. */
type ChildOf = { workflow: string; version?: number | undefined };

/** What the tree needs of one of its instances (the harness class implements it). */
export interface TreeMember {
  readonly id: string;
  readonly snapshot: Snapshot;
  /** Applies events as one write (the runner's start-and-abort create); whether any changed the snapshot. */
  write(events: readonly EventInput[]): boolean;
}

/** Makes (without starting it) the harness of a new instance of `definition`, registered under `id`. */
export type Spawn = (definition: AnyDefinition, id: string) => TreeMember;

/** The instances of one harness tree: their shared fake clock, the registry and the queued effects. */
export class HarnessTree {
  now: number;
  readonly members = new Map<string, TreeMember>();
  /** Effects asked for and not performed yet, oldest first. */
  readonly pending: ChildEffect[] = [];
  /** The flow limits' counts every instance of the tree shares, as a store's `flow` would. */
  readonly flow = new FlowCounter();
  private flushing = false;

  constructor(
    /** Undefined when the harness was given no `workflows`: `$child` tasks are left to the test. */
    readonly registry: WorkflowRegistry | undefined,
    readonly manual: boolean,
    private readonly spawn: Spawn,
    now: number,
  ) {
    this.now = now;
  }

  /** A registry of the root and its child workflows, or undefined when `workflows` was not given. */
  static registryOf(
    root: AnyDefinition,
    workflows: readonly AnyDefinition[] | undefined,
    kinds: readonly KindSet[] | undefined,
  ): WorkflowRegistry | undefined {
    return workflows === undefined ? undefined : createRegistry({ workflows: [root, ...workflows], kinds });
  }

  /** After a write of `s`: queues what the runner's `written` and task dispatch would do, in that order. */
  written(s: Snapshot, transitions: readonly LogEntry[], before: number): void {
    if (!this.registry) return;
    if (s.parent && isTerminal(s.status))
      this.pending.push({ kind: 'report', instance: s.id, to: s.parent, snapshot: s });
    for (const t of transitions) {
      if (t.type !== CHILD_STOPPED || t.detail === undefined || t.step === undefined) continue;
      const of = this.registry.forSnapshot(s).steps[t.step] as ChildOf;
      const ref: ParentRef = { id: s.id, workflow: s.workflow.name, step: t.step, key: t.detail };
      const how = s.status === 'aborted' ? 'abort' : 'cancel';
      this.pending.push({ kind: 'stop', instance: s.id, child: t.detail, how, ref, of });
    }
    for (const task of dispatchedBy(s, before)) {
      if (task.handler === CHILD_HANDLER && task.child !== undefined && !task.queued)
        this.pending.push({ kind: 'task', instance: s.id, task, snapshot: s });
    }
    if (!this.manual) this.flush();
  }

  /** Performs every pending effect, and those they cause, oldest first (re-entered calls return at once). */
  flush(): void {
    if (this.flushing) return;
    this.flushing = true;
    try {
      for (let n = 0; this.pending.length; n++) {
        if (n > 100_000) throw new Error('harness: child effects did not settle');
        this.perform(this.pending.shift()!);
      }
    } finally {
      this.flushing = false;
    }
  }

  /** Performs one effect (it need not be pending: performing one again is what a runner's retry does). */
  perform(effect: ChildEffect): void {
    if (effect.kind === 'task') this.runTask(effect.snapshot, effect.task);
    else if (effect.kind === 'report') this.report(effect.to, effect.snapshot);
    else this.stop(effect.child, effect.how, effect.of, effect.ref);
  }

  /** A `$child` task, as `ChildEffects.run` performs it. */
  private runTask(s: Snapshot, task: TaskState): void {
    const registry = this.registry!;
    const id = task.child!;
    const ref = parentRef(s, task);
    const child = this.members.get(id);
    if (task.phase === 'compensate') {
      if (!child) {
        this.report(ref, missingChild(id));
        return;
      }
      const cs = child.snapshot;
      // Only a completed child takes the revert; any other end answers as it is.
      if (isTerminal(cs.status) && cs.status !== 'completed') {
        this.report(ref, cs);
        return;
      }
      try {
        child.write([{ type: 'revert' }]);
      } catch (e) {
        if (!isStepfoldError(e)) throw e;
        const error = { message: e.message, code: e.code, retryable: false };
        this.report(ref, { ...cs, status: 'failed', error });
      }
      return;
    }
    const of = registry.forSnapshot(s).steps[task.step] as ChildOf;
    if (task.detached) {
      const stopped = this.stop(id, 'cancel', of, ref);
      if (isTerminal(stopped.status)) this.report(ref, stopped);
      return;
    }
    if (!child) {
      const input = taskView(registry.forSnapshot(s), s, task).input;
      const problem = inputProblem(registry.resolve(of.workflow, of.version), input);
      if (problem) {
        this.report(ref, refused(id, problem));
        return;
      }
      const trace = s.trace ? { trace: s.trace } : {};
      this.create(of, id).write([{ type: 'start', id, input, parent: ref, ...trace }]);
      return;
    }
    const cs = child.snapshot;
    if (!sameParent(cs.parent, ref)) {
      const message = `instance ${id} exists and is not this step's child`;
      const error = { message, code: 'CHILD_ID_TAKEN', retryable: false };
      this.report(ref, { ...cs, status: 'failed', error });
    } else if (isTerminal(cs.status)) this.report(ref, cs);
  }

  /** Cancels or aborts a child (one not created yet is created ended); returns it afterwards. */
  private stop(id: string, how: 'cancel' | 'abort', of: ChildOf, ref: ParentRef): Snapshot {
    const child = this.members.get(id);
    if (!child) {
      const created = this.create(of, id);
      created.write([
        { type: 'start', id, input: null, parent: ref },
        { type: 'abort', reason: STOPPED_BEFORE_START },
      ]);
      return created.snapshot;
    }
    try {
      child.write([{ type: how }]);
    } catch (e) {
      // Past its pivot: it goes on, and reports when it ends.
      if (!isStepfoldError(e, 'PAST_PIVOT')) throw e;
    }
    return child.snapshot;
  }

  /** Sends the parent the `child.ended` event of `child`'s end (a parent not in the tree hears nothing). */
  private report(ref: ParentRef, child: Snapshot): void {
    const parent = this.members.get(ref.id);
    if (!parent) return;
    parent.write([endedEvent(ref, child, this.registry!, this.now) as EventInput]);
  }

  private create(of: ChildOf, id: string): TreeMember {
    return this.spawn(this.registry!.resolve(of.workflow, of.version), id);
  }
}

/**
 * What a child's declared input schema finds wrong with `input`, as the runner's start reports it
 * (`INVALID_INPUT`). A schema that validates asynchronously cannot be asked here: it passes.
 */
function inputProblem(definition: AnyDefinition, input: unknown): ValidationError | undefined {
  const check = declaredCheckOf(definition, { type: 'start', input });
  return check && declaredProblem(check.schema, check.value, check.at);
}
