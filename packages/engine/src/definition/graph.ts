import type { Issue } from '../errors.js';
import type { StepDefinition } from './schema.js';

/** One enclosing parallel branch: the parallel step and the branch index. */
export interface BranchRef {
  parallel: string;
  branch: number;
}

const WAITING_KINDS = new Set(['wait', 'human', 'sleep', 'collect']);

/** Successors of a step that stay in its own region (parallel branch entries excluded). */
export function successors(step: StepDefinition): string[] {
  const out: string[] = [];
  if ('next' in step && step.next) out.push(step.next);
  if ((step.kind === 'wait' || step.kind === 'human') && step.onTimeout) out.push(step.onTimeout);
  if (step.kind === 'choice') {
    for (const b of step.branches) out.push(b.next);
    if (step.otherwise) out.push(step.otherwise);
  }
  return out;
}

const key = (chain: BranchRef[]) => chain.map((r) => `${r.parallel}#${r.branch}`).join('/');

/**
 * Structural checks that need the whole graph: dangling targets, unreachable steps, branches
 * that leave their parallel block, and cycles that no waiting step breaks. Returns every issue
 * found plus each step's enclosing branches (outermost first).
 */
export function analyzeGraph(
  start: string,
  steps: Record<string, StepDefinition>,
): { issues: Issue[]; regions: Map<string, BranchRef[]> } {
  const issues: Issue[] = [];
  const has = (id: string) => Object.hasOwn(steps, id);
  for (const [id, step] of Object.entries(steps)) {
    const targets = [...successors(step), ...(step.kind === 'parallel' ? step.branches : [])];
    for (const t of targets) {
      if (!has(t)) issues.push({ path: `steps.${id}`, message: `target "${t}" does not exist` });
    }
    if (
      step.kind === 'parallel' &&
      typeof step.join === 'object' &&
      step.join.atLeast > step.branches.length
    ) {
      issues.push({
        path: `steps.${id}.join`,
        message: `atLeast ${step.join.atLeast} exceeds ${step.branches.length} branches`,
      });
    }
  }
  if (!has(start)) issues.push({ path: 'start', message: `start step "${start}" does not exist` });

  const regions = new Map<string, BranchRef[]>();
  const queue: Array<[string, BranchRef[]]> = has(start) ? [[start, []]] : [];
  while (queue.length) {
    const [id, chain] = queue.shift()!;
    const seen = regions.get(id);
    if (seen) {
      if (key(seen) !== key(chain)) {
        issues.push({
          path: `steps.${id}`,
          message: `reached from two regions (${key(seen) || 'top level'} and ${key(chain) || 'top level'}): a parallel branch must not jump out of its branch`,
        });
      }
      continue;
    }
    const step = steps[id];
    if (!step) continue;
    regions.set(id, chain);
    for (const t of successors(step)) if (has(t)) queue.push([t, chain]);
    if (step.kind === 'parallel') {
      step.branches.forEach((entry, branch) => {
        if (has(entry)) queue.push([entry, [...chain, { parallel: id, branch }]]);
      });
    }
  }
  for (const id of Object.keys(steps)) {
    if (!regions.has(id)) issues.push({ path: `steps.${id}`, message: 'unreachable from the start step' });
  }

  // A cycle among non-waiting steps would settle forever within one event.
  const color = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const visit = (id: string) => {
    color.set(id, 1);
    stack.push(id);
    const step = steps[id]!;
    const next = [...successors(step), ...(step.kind === 'parallel' ? step.branches : [])];
    for (const t of next) {
      const ts = steps[t];
      if (!ts || WAITING_KINDS.has(ts.kind)) continue;
      if (color.get(t) === 1) {
        const cycle = stack.slice(stack.indexOf(t));
        issues.push({
          path: `steps.${t}`,
          message: `cycle with no waiting step: ${[...cycle, t].join(' -> ')}`,
        });
      } else if (!color.has(t)) visit(t);
    }
    stack.pop();
    color.set(id, 2);
  };
  for (const [id, step] of Object.entries(steps)) {
    if (!color.has(id) && !WAITING_KINDS.has(step.kind)) visit(id);
  }
  return { issues, regions };
}
