import type { StepKind } from '../definition/schema.js';
import type { KindSet } from '../reducer/kind-table.js';
import type { LogEntry, Snapshot, TaskState } from '../snapshot.js';
import type { Store } from '../store/store.js';
import type { RunTask } from './execute-task.js';
import type { MakeFlowGate } from './flow-port.js';
import type { PayloadPort } from './payload-port.js';
import type { PublishPort } from './publish-port.js';
import type { RegisteredCheck, WorkflowRegistry } from './registry.js';
import type { WriteLoop } from './write-loop.js';
import type { OnWrite } from './write-request.js';

/** What a runner's child effects write with: its store, registry, writes and clock. */
export interface ChildEffectsOptions {
  store: Store;
  registry: WorkflowRegistry;
  writes: WriteLoop;
  clock: () => number;
  /** Whether a worker drives this runner: a child's end then goes through the parent's inbox. */
  viaInbox: () => boolean;
  /** The runner's offloading: a child's input is resolved from its parent's data (then offloaded under the child), its output copied under the parent. */
  payloads?: PayloadPort | undefined;
}

/** A runner's side of child workflows (the `composition` kind set brings it). */
export interface ChildEffectsPort {
  /** Performs a `$child` task that `s` dispatched. */
  run(s: Snapshot, task: TaskState, onWrite: OnWrite): Promise<void>;
  /** Whether a write has anything for `written` to do (checked on every write, so cheap). */
  concerns(s: Snapshot, transitions: readonly LogEntry[]): boolean;
  /** After a write: a child that ended reports to its parent; a parent that ended stops its children. */
  written(s: Snapshot, transitions: readonly LogEntry[], onWrite: OnWrite): Promise<void>;
}

/**
 * A kind set as a runner takes it: its reducer rules, the runner's child effects when it brings
 * child steps, its flow gate when it brings flow limits.
 */
export interface RunnerKindSet<K extends StepKind = never> extends KindSet<K> {
  /** Makes the runner's side of child workflows (the composition set brings it). */
  readonly childEffects?: ((o: ChildEffectsOptions) => ChildEffectsPort) | undefined;
  /** Makes the runner's side of flow limits (the flowControl set brings it). */
  readonly flowGate?: MakeFlowGate | undefined;
  /**
   * Checks the definitions a runner registers, together (by name, then version); throws what
   * `createRunner` throws. The composition set checks that every child workflow is registered.
   */
  readonly checkRegistered?: RegisteredCheck | undefined;
  /** `runner.publish` (the eventTriggers set brings it). */
  readonly publish?: PublishPort | undefined;
  /** Wraps the runner's handler attempts (the searchAttributes set brings it: `ctx.setAttributes`). */
  readonly taskWrapper?: ((run: RunTask) => RunTask) | undefined;
}

/** A runner's child effects, from the first of its kind sets that brings them (none: no child steps run). */
export function childEffects(
  kinds: readonly RunnerKindSet[] | undefined,
  o: ChildEffectsOptions,
): ChildEffectsPort | undefined {
  const make = kinds?.find((k) => k.childEffects)?.childEffects;
  return make?.(o);
}
