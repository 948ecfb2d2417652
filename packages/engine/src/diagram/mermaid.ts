import { compileWorkflow } from '../definition/compile.js';
import type { BranchRef } from '../definition/graph.js';
import { kindOf } from '../definition/kinds/index.js';
import type { DefinitionInput, StepDefinition, WorkflowDefinition } from '../definition/schema.js';
import { CHILD_HANDLER, type Snapshot, type Status } from '../snapshot.js';
import { type DiagramKind, type Edge, type LiveStep, nodeIds, stepEdges, stepNode } from './kind.js';
import { DIAGRAM_KINDS } from './kinds.js';
import { type DiagramState, STATE_STYLES, stepStates } from './states.js';
import { escapeLabel } from './text.js';

/** Options of {@link toMermaid}. */
export interface MermaidOptions {
  /** Flowchart direction: top-down (default) or left-to-right, and their reverses. */
  direction?: 'TD' | 'LR' | 'BT' | 'RL' | undefined;
  /**
   * Statuses of child instances you loaded, by instance id: a child step's node names its child's
   * status, and while the step is active it is coloured by it (the parent's snapshot alone only
   * knows that the child has not ended).
   */
  children?: Readonly<Record<string, Status>> | undefined;
}

/** How a step's kind is drawn. */
function drawn(step: StepDefinition & { id: string }): DiagramKind<StepDefinition & { id: string }> {
  return DIAGRAM_KINDS[step.kind] as DiagramKind<StepDefinition & { id: string }>;
}

/**
 * Renders a workflow definition as a Mermaid flowchart: one node per step, shaped by kind, with
 * edges for `next`, choice branches (labelled with their condition), timeouts, human decisions and
 * continue-as-new; compensation handlers as dotted notes; each parallel branch as a subgraph
 * (nested parallels nest). With a snapshot, steps are coloured by state (`classDef` classes
 * `done`, `running`, `waiting`, `failed`, `compensated`), the edges taken so far are drawn bold,
 * a child step's node names its child instance and a map step's node its counts
 * (`37/500 done · 3 failed · 20 running`).
 * The definition is validated first (`INVALID_DEFINITION` on a bad one).
 *
 * @example
 * import { toMermaid } from '@stepfold/engine';
 *
 * const text = toMermaid(order, snapshot); // paste into any Markdown that renders ```mermaid blocks
 * // flowchart TD
 * //   wf_start(("start"))
 * //   s_reserve["reserve<br/>reserveStock()"]
 * //   ...
 * //   class s_reserve done
 */
export function toMermaid(
  definition: DefinitionInput | WorkflowDefinition,
  snapshot?: Snapshot | null,
  options: MermaidOptions = {},
): string {
  const { definition: def, regions } = compileWorkflow(definition);
  const steps = Object.values(def.steps);
  // Members of each region: top level (key ''), or a branch of a parallel step.
  const members = new Map<string, Array<StepDefinition & { id: string }>>();
  const regionKey = (ref: BranchRef | undefined) =>
    ref === undefined ? '' : `${nodeIds.branch(ref.parallel, ref.branch)}`;
  for (const step of steps) {
    const chain = regions.get(step.id) ?? [];
    const key = regionKey(chain[chain.length - 1]);
    members.set(key, [...(members.get(key) ?? []), step]);
  }

  const edges = steps.flatMap((s) => {
    const undo = kindOf(s).compensator?.(s);
    const note: Edge[] =
      undo === undefined ? [] : [{ from: nodeIds.step(s.id), to: nodeIds.compensation(s.id), arrow: '-.-' }];
    return [...stepEdges(drawn(s), s, regions.get(s.id)), ...note];
  });
  edges.unshift({ from: nodeIds.start, to: nodeIds.step(def.start), arrow: '-->' });
  const used = new Set(edges.map((e) => e.to));

  const lines = [`flowchart ${options.direction ?? 'TD'}`];
  lines.push(`  accTitle: ${escapeLabel(`workflow ${def.name} version ${def.version}`, 200)}`);
  lines.push(`  ${nodeIds.start}(("start"))`);
  const children = options.children ?? {};
  const live = (id: string): LiveStep | undefined => {
    const state = snapshot && Object.hasOwn(snapshot.steps, id) ? snapshot.steps[id] : undefined;
    return snapshot && state ? { state, snapshot, children } : undefined;
  };
  const region = (key: string, indent: string) => {
    for (const step of members.get(key) ?? []) {
      const kind = drawn(step);
      lines.push(`${indent}${stepNode(kind, step, live(step.id))}`);
      const undo = kindOf(step).compensator?.(step);
      if (undo !== undefined) {
        lines.push(`${indent}${nodeIds.compensation(step.id)}["⟲ compensate: ${undoText(step, undo)}"]`);
      }
      // A step that forks branches: a subgraph per branch, then the node where they join.
      const forks = kindOf(step).forks?.(step);
      if (forks === undefined) continue;
      forks.forEach((entry, i) => {
        const sub = nodeIds.branch(step.id, i);
        lines.push(
          `${indent}subgraph ${sub}["${escapeLabel(step.id)} · branch ${i + 1}: ${escapeLabel(entry)}"]`,
        );
        region(sub, `${indent}  `);
        lines.push(`${indent}end`);
      });
      lines.push(
        `${indent}${nodeIds.join(step.id)}{{"${escapeLabel(step.id)}<br/>${kind.join?.(step) ?? 'join'}"}}`,
      );
    }
  };
  region('', '  ');
  if (used.has(nodeIds.end)) lines.push(`  ${nodeIds.end}((("end")))`);
  if (used.has(nodeIds.failed)) lines.push(`  ${nodeIds.failed}((("failed")))`);
  for (const e of edges)
    lines.push(`  ${e.from} ${e.arrow}${e.label === undefined ? '' : `|"${e.label}"|`} ${e.to}`);

  lines.push(`  classDef terminal fill:#343a40,stroke:#343a40,color:#ffffff`);
  lines.push(`  classDef note fill:#ffffff,stroke:#868e96,stroke-dasharray:3 3,color:#495057`);
  lines.push(
    `  class ${[nodeIds.start, ...[nodeIds.end, nodeIds.failed].filter((n) => used.has(n))].join(',')} terminal`,
  );
  const notes = steps.filter((s) => kindOf(s).compensator?.(s) !== undefined);
  if (notes.length) lines.push(`  class ${notes.map((s) => nodeIds.compensation(s.id)).join(',')} note`);
  if (snapshot) lines.push(...stateLines(def, snapshot, edges, used, children));
  return `${lines.join('\n')}\n`;
}

/** A compensation note's text: the handler, or what the runner's own child effect does. */
function undoText(step: StepDefinition, undo: string): string {
  if (undo !== CHILD_HANDLER) return escapeLabel(undo);
  return step.kind === 'map' ? 'revert each child' : 'revert the child';
}

/** `classDef`s, `class` assignments and bold taken edges for a snapshot. */
function stateLines(
  def: WorkflowDefinition,
  snapshot: Snapshot,
  edges: Edge[],
  used: Set<string>,
  children: Readonly<Record<string, Status>>,
): string[] {
  const states = new Map<string, DiagramState>();
  const byStep = stepStates(def, snapshot, children);
  for (const step of Object.values(def.steps)) {
    const state = byStep.get(step.id);
    if (state === undefined) continue;
    states.set(nodeIds.step(step.id), state);
    // The join is reached once the parallel step has finished, one way or the other.
    if (kindOf(step).forks !== undefined && state !== 'running' && state !== 'waiting') {
      states.set(nodeIds.join(step.id), state);
    }
  }
  if (snapshot.status === 'completed' && used.has(nodeIds.end)) states.set(nodeIds.end, 'done');
  if ((snapshot.status === 'failed' || snapshot.status === 'dlq') && used.has(nodeIds.failed)) {
    states.set(nodeIds.failed, 'failed');
  }
  const out: string[] = [];
  for (const [name, style] of Object.entries(STATE_STYLES)) out.push(`  classDef ${name} ${style}`);
  for (const name of Object.keys(STATE_STYLES) as DiagramState[]) {
    const ids = [...states].filter(([, s]) => s === name).map(([id]) => id);
    if (ids.length) out.push(`  class ${ids.join(',')} ${name}`);
  }
  // An edge was taken when its source has finished and its target was reached; only a failed
  // step leads to the failed node.
  const finished = (id: string) => {
    const s = states.get(id);
    return id === nodeIds.start || s === 'done' || s === 'compensated' || s === 'failed';
  };
  const taken = edges.flatMap((e, i) => {
    if (e.arrow === '-.-' || !states.has(e.to)) return [];
    if (!finished(e.from)) return e.fork && states.has(e.from) ? [i] : [];
    const failing = states.get(e.from) === 'failed';
    return failing === (e.to === nodeIds.failed) ? [i] : [];
  });
  if (taken.length) out.push(`  linkStyle ${taken.join(',')} stroke-width:3px`);
  return out;
}
