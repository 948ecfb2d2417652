import type { LogEntry, Snapshot, TaskState } from '../snapshot.js';
import type { Store } from '../store/store.js';
import type { PayloadPort } from './payload-port.js';
import type { WorkflowRegistry } from './registry.js';
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

/** A runner's side of child workflows (`@stepfold/engine/composition` provides it). */
export interface ChildEffectsPort {
  /** Performs a `$child` task that `s` dispatched. */
  run(s: Snapshot, task: TaskState, onWrite: OnWrite): Promise<void>;
  /** Whether a write has anything for `written` to do (checked on every write, so cheap). */
  concerns(s: Snapshot, transitions: readonly LogEntry[]): boolean;
  /** After a write: a child that ended reports to its parent; a parent that ended stops its children. */
  written(s: Snapshot, transitions: readonly LogEntry[], onWrite: OnWrite): Promise<void>;
}

let factory: ((o: ChildEffectsOptions) => ChildEffectsPort) | undefined;

/** Installs the child effects every runner uses from now on (the composition entry calls it once). */
export function provideChildEffects(make: (o: ChildEffectsOptions) => ChildEffectsPort): void {
  factory = make;
}

/** A runner's child effects, or undefined while the composition entry is not loaded. */
export function childEffects(o: ChildEffectsOptions): ChildEffectsPort | undefined {
  return factory?.(o);
}
