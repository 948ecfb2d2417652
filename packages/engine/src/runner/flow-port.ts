import type { WorkflowDefinition } from '../definition/schema.js';
import type { WorkflowEvent } from '../events.js';
import type { Reduction } from '../reducer/reducer.js';
import type { LogEntry, Snapshot } from '../snapshot.js';
import type { Store } from '../store/store.js';

// The runner's side of flow limits as a port: the write loop asks it around every write, and a
// kind set (`flowControl`) brings what answers. Types only, so the core imports none of it.

/** What a runner's flow gate counts with: its store, clock and definitions, and how it ticks an instance. */
export interface FlowGateOptions {
  store: Store;
  clock: () => number;
  /** Every definition the runner registered: a limited one needs a store with `flow`. */
  workflows: readonly WorkflowDefinition[];
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
  /** Whether a write from `prev` to `next` may touch the store's counts (cheap: asked on every write). */
  touches(prev: Snapshot | null, next: Snapshot): boolean;
  /** Before the save: acquires what `next` needs beyond `prev`, folding each refusal or grant in with `fold`. */
  acquire(
    prev: Snapshot | null,
    next: Snapshot,
    transitions: readonly LogEntry[],
    fold: (s: Snapshot, e: WorkflowEvent) => Reduction,
  ): Promise<Gated>;
  /** After a failed save: gives back what the write took. */
  giveBack(taken: readonly string[]): void;
  /** After a successful save: releases what the write ended (ticking waiters), renews moved leases. */
  settled(prev: Snapshot | null, next: Snapshot): void;
}

/** A kind set's maker of the runner's flow gate: undefined when the store counts nothing (no `flow`, no limits). */
export type MakeFlowGate = (o: FlowGateOptions) => FlowGatePort | undefined;
