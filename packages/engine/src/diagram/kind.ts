import type { BranchRef } from '../definition/graph.js';
import type { Snapshot, Status, StepState } from '../snapshot.js';
import { duration, encodeId, escapeLabel } from './text.js';

/** Mermaid node ids of the parts of a diagram; step ids are encoded so any id is safe. */
export const nodeIds = {
  start: 'wf_start',
  end: 'wf_end',
  failed: 'wf_failed',
  step: (id: string) => `s_${encodeId(id)}`,
  join: (parallel: string) => `j_${encodeId(parallel)}`,
  compensation: (id: string) => `k_${encodeId(id)}`,
  branch: (parallel: string, index: number) => `g_${encodeId(parallel)}_${index}`,
} as const;

/** One edge of a diagram. */
export interface Edge {
  from: string;
  to: string;
  /** `-->` a path taken when things go well, `-.->` a timeout, rejection or loop, `-.-` a note. */
  arrow: '-->' | '-.->' | '-.-';
  label?: string | undefined;
  /** A parallel step's edge into one of its branches: taken as soon as the step is entered. */
  fork?: boolean | undefined;
}

/** What a kind's `edges` hook draws with: the edges of one step, from its node unless told. */
export interface EdgeKit {
  /** Adds an edge, from the step's node unless `from` says otherwise. */
  add(edge: Omit<Edge, 'from'> & { from?: string }): void;
  /** An edge to the step's `next`, or to where its path ends when it has none. */
  next(label?: string): void;
  /** Where the step's path ends: the workflow's end, or the join of its innermost parallel block. */
  end: string;
  /** A dotted edge for a timeout of `ms` (none when undefined): to `onTimeout`, or to the failed node. */
  timeout(ms: number | undefined, onTimeout: string | undefined): void;
}

/**
 * How the diagram draws one step kind: the shape of its node, the second line of its label, its
 * edges and, for a kind that forks branches, the label of its join node. `diagram/kinds.ts` has
 * one for every kind, keyed by the definition's kinds, so a kind without one does not compile.
 */
export interface DiagramKind<S> {
  /** The Mermaid brackets around the step's label. */
  shape: readonly [open: string, close: string];
  /** What the step does, in a few words, escaped (user data goes through `escapeLabel`). */
  label(step: S): string;
  /** The step's outgoing edges; without this hook, one edge to its `next` (see {@link EdgeKit}). */
  edges?(step: S, edges: EdgeKit): void;
  /** The second line of the join node of a step that forks branches (the first is the step's id). */
  join?(step: S): string;
  /**
   * A third label line from a live snapshot (escaped), for a step entered in it: what only the
   * instance knows (a map's counts, a child's id). Without this hook, or when it returns
   * undefined, the node has the two lines only.
   */
  live?(step: S, live: LiveStep): string | undefined;
}

/** What a kind's `live` hook reads: the step's state, the instance, and what the caller loaded. */
export interface LiveStep {
  /** The step's state in the snapshot. */
  state: StepState;
  /** The instance. */
  snapshot: Snapshot;
  /** Statuses of child instances the caller loaded, by instance id (see `MermaidOptions.children`). */
  children: Readonly<Record<string, Status>>;
}

/** A step as the diagram reads it: its id, and its `next` where its kind has one. */
type Step = { id: string; next?: string | undefined };

/**
 * The node of one step, in its kind's shape: the step id over the kind's label line, and under
 * them the kind's live line when there is one.
 */
export function stepNode<S extends Step>(kind: DiagramKind<S>, step: S, live?: LiveStep): string {
  const [open, close] = kind.shape;
  const extra = live && kind.live?.(step, live);
  const text = `${escapeLabel(step.id)}<br/>${kind.label(step)}${extra ? `<br/>${extra}` : ''}`;
  return `${nodeIds.step(step.id)}${open}"${text}"${close}`;
}

/** The outgoing edges of one step, drawn by its kind; `chain` is the step's enclosing branches. */
export function stepEdges<S extends Step>(kind: DiagramKind<S>, step: S, chain: BranchRef[] = []): Edge[] {
  const from = nodeIds.step(step.id);
  const inner = chain[chain.length - 1];
  const end = inner === undefined ? nodeIds.end : nodeIds.join(inner.parallel);
  const out: Edge[] = [];
  const kit: EdgeKit = {
    add: (edge) => out.push({ from, ...edge }),
    next(label) {
      const to = step.next === undefined ? end : nodeIds.step(step.next);
      out.push(label === undefined ? { from, to, arrow: '-->' } : { from, to, arrow: '-->', label });
    },
    end,
    timeout(ms, onTimeout) {
      if (ms === undefined) return;
      const to = onTimeout === undefined ? nodeIds.failed : nodeIds.step(onTimeout);
      out.push({ from, to, arrow: '-.->', label: `timeout ${duration(ms)}` });
    },
  };
  if (kind.edges) kind.edges(step, kit);
  else kit.next();
  return out;
}
