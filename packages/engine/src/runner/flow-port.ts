import type { WorkflowEvent } from '../events.js';
import type { Reduction } from '../reducer/reducer.js';
import type { LogEntry, Snapshot } from '../snapshot.js';
import type { SaveFlow } from '../store/flow.js';
import type { Store } from '../store/store.js';
import type { WorkflowRegistry } from './registry.js';

// The runner's side of flow limits as a port: the write loop asks it around every write, and a
// kind set (`flowControl`) brings what answers. Types only, so the core imports none of it.

/** What a runner's flow gate counts with: its store, clock and registry, and how it ticks an instance. */
export interface FlowGateOptions {
  store: Store;
  clock: () => number;
  /** The runner's definitions: a limited one needs a store with `flow`. */
  registry: WorkflowRegistry;
  /** Ticks an instance (a waiter whose slot freed); rejects as `runner.tick` does. */
  tick: (id: string) => Promise<unknown>;
}

/** A write's snapshot after the store was asked: refusals folded in, and the holders it took. */
export interface Gated {
  next: Snapshot;
  transitions: readonly LogEntry[];
  /** Holders this write acquired: given back if its save fails. */
  taken: string[];
}

/** A runner's side of flow limits (the `flowControl` kind set brings it). */
export interface FlowGatePort {
  /**
   * Saves `next` (written over `prev`; null: a create) with `save`; when the write touches flow
   * limits (a cheap test, asked on every write), before the save it acquires what `next`
   * needs beyond `prev`, folding each refusal or grant in with `fold` (what is saved and returned);
   * after a failed save gives back what it took; after a successful one releases what the write
   * ended (ticking waiters) and renews moved leases. `saveWith`, when the save can carry flow work
   * (`SaveOptions.flow`), is the same save doing it: on a store whose `flow.inSave` is true, what
   * the write ends is released in it, and the one limited attempt it dispatches acquired in it.
   * For a create (`prev` null) it is the create carrying `CreateOptions.flow`, used where
   * `flow.inCreate` is true: the first attempt's holder is taken in the create's own write.
   */
  save(
    prev: Snapshot | null,
    next: Snapshot,
    transitions: readonly LogEntry[],
    save: (next: Snapshot) => Promise<unknown>,
    fold: (s: Snapshot, e: WorkflowEvent) => Reduction,
    saveWith?: (next: Snapshot, flow: SaveFlow) => Promise<unknown>,
  ): Promise<Gated>;
}

/** A kind set's maker of the runner's flow gate: undefined when the store counts nothing (no `flow`, no limits). */
export type MakeFlowGate = (o: FlowGateOptions) => FlowGatePort | undefined;
