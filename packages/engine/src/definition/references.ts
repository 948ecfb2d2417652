import type { Issue } from '../errors.js';
import type { BranchRef } from './graph.js';
import { kindOf } from './kinds/index.js';
import type { StepDefinition } from './schema.js';

// Build-time checks of the names a definition refers to: data paths into `outputs.<step>` must name
// a step that can have completed before the reader runs.

/** Edit distance, for "did you mean" suggestions. */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}

/** The closest of `names` to `name`, when it is close enough to be a typo. */
export function suggest(name: string, names: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestD = Math.max(2, Math.floor(name.length / 3)) + 1;
  for (const n of names) {
    const d = distance(name, n);
    if (d < bestD) {
      best = n;
      bestD = d;
    }
  }
  return best;
}

/**
 * Steps each step can lead to, directly or not: its targets, the branches it forks, and from a
 * step inside a branch the parallel step that joins it (and so everything after that).
 */
function reachability(
  steps: Record<string, StepDefinition>,
  regions: Map<string, BranchRef[]>,
): Map<string, Set<string>> {
  const edges = new Map<string, string[]>();
  for (const [id, step] of Object.entries(steps)) {
    const kind = kindOf(step);
    const out = [...kind.targets(step), ...(kind.forks?.(step) ?? [])];
    for (const r of regions.get(id) ?? []) out.push(r.parallel);
    edges.set(id, out);
  }
  const reach = new Map<string, Set<string>>();
  for (const id of Object.keys(steps)) {
    const seen = new Set<string>();
    const queue = [...(edges.get(id) ?? [])];
    while (queue.length) {
      const next = queue.pop()!;
      if (seen.has(next) || !Object.hasOwn(steps, next)) continue;
      seen.add(next);
      queue.push(...(edges.get(next) ?? []));
    }
    reach.set(id, seen);
  }
  return reach;
}

/** Whether two steps sit in different branches of one parallel step (they run side by side). */
function siblings(a: BranchRef[], b: BranchRef[]): boolean {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i]!.parallel !== b[i]!.parallel) return false;
    if (a[i]!.branch !== b[i]!.branch) return true;
  }
  return false;
}

/**
 * Every `outputs.<step>` path (of the kinds' `paths`, or of `pathsOf`) that names no step (with a suggestion), or a step that cannot have
 * completed when the reader runs (it never comes before the reader on any path).
 */
export function referenceIssues(
  steps: Record<string, StepDefinition>,
  regions: Map<string, BranchRef[]>,
  pathsOf: (step: StepDefinition, at: string) => Array<{ path: string; at: string }> = (step, at) =>
    kindOf(step).paths?.(step, at) ?? [],
): Issue[] {
  const issues: Issue[] = [];
  let reach: Map<string, Set<string>> | undefined;
  for (const [reader, step] of Object.entries(steps)) {
    for (const { path, at } of pathsOf(step, `steps.${reader}`)) {
      const [root, target] = path.split('.');
      if (root !== 'outputs' || target === undefined || target === '') continue;
      if (!Object.hasOwn(steps, target)) {
        const hint = suggest(target, Object.keys(steps));
        issues.push({
          path: at,
          message: `"${path}" reads step "${target}", which does not exist${hint ? ` (did you mean "${hint}"?)` : ''}`,
        });
        continue;
      }
      reach ??= reachability(steps, regions);
      const before = reach.get(target)?.has(reader) ?? false;
      if (!before && !siblings(regions.get(target) ?? [], regions.get(reader) ?? [])) {
        issues.push({
          path: at,
          message: `"${path}" reads step "${target}", which cannot have completed before "${reader}" runs`,
        });
      }
    }
  }
  return issues;
}
