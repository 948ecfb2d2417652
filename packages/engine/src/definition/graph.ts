import type { Issue } from '../errors.js';
import { kindOf } from './kinds/index.js';
import type { StepDefinition } from './schema.js';

/** One enclosing parallel branch: the parallel step and the branch index. */
export interface BranchRef {
  parallel: string;
  branch: number;
}

/** Successors of a step that stay in its own region (entries of the branches it forks excluded). */
export function successors(step: StepDefinition): string[] {
  return kindOf(step).targets(step);
}

/** Every step a step can lead to: its successors and the entries of the branches it forks. */
function outgoing(step: StepDefinition): string[] {
  const kind = kindOf(step);
  return [...kind.targets(step), ...(kind.forks?.(step) ?? [])];
}

const key = (chain: BranchRef[]) => chain.map((r) => `${r.parallel}#${r.branch}`).join('/');

/**
 * Structural checks that need the whole graph: dangling targets, unreachable steps, branches
 * that leave their parallel block, and cycles that no waiting step breaks (none through a
 * `duplicated` id). Returns every issue found plus each step's enclosing branches (outermost first).
 */
export function analyzeGraph(
  start: string,
  steps: Record<string, StepDefinition>,
  duplicated: ReadonlySet<string> = new Set(),
): { issues: Issue[]; regions: Map<string, BranchRef[]> } {
  const issues: Issue[] = [];
  const has = (id: string) => Object.hasOwn(steps, id);
  for (const [id, step] of Object.entries(steps)) {
    for (const t of outgoing(step)) {
      if (!has(t)) issues.push({ path: `steps.${id}`, message: `target "${t}" does not exist` });
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
          message: `reached from two regions (${key(seen) || 'top level'} and ${key(chain) || 'top level'}): a parallel branch must not jump out of its branch (end the branch's last step with end: true, and give the parallel step a next)`,
        });
      }
      continue;
    }
    const step = steps[id]!;
    regions.set(id, chain);
    for (const t of successors(step)) if (has(t)) queue.push([t, chain]);
    kindOf(step)
      .forks?.(step)
      .forEach((entry, branch) => {
        if (has(entry)) queue.push([entry, [...chain, { parallel: id, branch }]]);
      });
  }
  issues.push(...unreachableIssues(steps, regions));

  // A cycle among non-waiting steps would settle forever within one event.
  const waits = (id: string) => kindOf(steps[id]!).waits === true;
  const color = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const visit = (id: string) => {
    color.set(id, 1);
    stack.push(id);
    for (const t of outgoing(steps[id]!)) {
      if (!has(t) || waits(t)) continue;
      if (color.get(t) === 1) {
        const cycle = stack.slice(stack.indexOf(t));
        // Through a duplicated id the cycle is likely an artifact of the duplicate, reported already.
        if (cycle.some((c) => duplicated.has(c))) continue;
        issues.push({
          path: `steps.${t}`,
          message: `cycle with no waiting step: ${[...cycle, t].join(' -> ')}`,
        });
      } else if (!color.has(t)) visit(t);
    }
    stack.pop();
    color.set(id, 2);
  };
  for (const id of Object.keys(steps)) {
    if (!color.has(id) && !waits(id)) visit(id);
  }
  return { issues, regions };
}

/**
 * One issue per unreachable step. When a reachable parallel step without `next` comes before it
 * (in the order steps are written), that is named as the cause: its branches end, and nothing
 * leads to the steps written after them.
 */
function unreachableIssues(
  steps: Record<string, StepDefinition>,
  regions: Map<string, BranchRef[]>,
): Issue[] {
  const issues: Issue[] = [];
  let openParallel: string | undefined;
  let firstAfter: string | undefined;
  for (const [id, step] of Object.entries(steps)) {
    if (regions.has(id)) {
      if (step.kind === 'parallel' && step.next === undefined) [openParallel, firstAfter] = [id, undefined];
      continue;
    }
    firstAfter ??= id;
    issues.push({
      path: `steps.${id}`,
      message:
        openParallel === undefined
          ? 'unreachable from the start step'
          : `unreachable from the start step: parallel step "${openParallel}" has no next, so the steps after it are unreachable (give "${openParallel}" next: "${firstAfter}")`,
    });
  }
  return issues;
}
