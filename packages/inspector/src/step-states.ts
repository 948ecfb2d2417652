import type { Snapshot, StepDefinition, WorkflowDefinition } from '@stepfold/engine';
import { type DiagramState, nodeIds, stepState } from '@stepfold/engine/diagram';

/** What the inspector calls a step's state: the diagram's states, plus skipped and not entered. */
export type StepLabel = DiagramState | 'skipped' | 'not entered';

/** Steps named by a step's own fields: next, choice branches, otherwise, timeouts, parallel branches. */
function targets(step: StepDefinition): string[] {
  const out: string[] = [];
  const s = step as Record<string, unknown>;
  for (const field of ['next', 'otherwise', 'onTimeout'])
    if (typeof s[field] === 'string') out.push(s[field]);
  if (Array.isArray(s['branches'])) {
    for (const b of s['branches']) {
      if (typeof b === 'string') out.push(b);
      else if (typeof (b as { next?: unknown })?.next === 'string') out.push((b as { next: string }).next);
    }
  }
  return out;
}

/** The steps inside a parallel step's branches (nested ones included): what its branches reach. */
function inside(def: WorkflowDefinition, parallel: StepDefinition & { kind: 'parallel' }): Set<string> {
  const seen = new Set<string>();
  const todo = [...parallel.branches];
  for (let id = todo.pop(); id !== undefined; id = todo.pop()) {
    if (seen.has(id) || !Object.hasOwn(def.steps, id)) continue;
    seen.add(id);
    // A branch never leads out of its block (the definition is checked for that), so this stays inside.
    todo.push(...targets(def.steps[id] as StepDefinition));
  }
  return seen;
}

/**
 * Each step's label. The diagram's own `stepState` leaves skipped steps unnamed and counts an
 * active parallel step as running while its branches run; a parallel step whose active branch
 * steps all wait (for a signal, a timer, a decision) is labelled waiting here, since nothing runs.
 */
export function stepLabels(s: Snapshot, def: WorkflowDefinition | undefined): Map<string, StepLabel> {
  const ids = [...new Set([...Object.keys(def?.steps ?? {}), ...Object.keys(s.steps)])];
  const labels = new Map<string, StepLabel>();
  for (const id of ids) {
    const st = Object.hasOwn(s.steps, id) ? s.steps[id] : undefined;
    labels.set(id, st?.status === 'skipped' ? 'skipped' : (stepState(s, id) ?? 'not entered'));
  }
  if (!def) return labels;
  for (const [id, step] of Object.entries(def.steps)) {
    if (step.kind !== 'parallel' || labels.get(id) !== 'running') continue;
    const members = inside(def, step);
    const busy = [...members].some((m) => labels.get(m) === 'running');
    const waits = [...members].some((m) => labels.get(m) === 'waiting');
    if (waits && !busy) labels.set(id, 'waiting');
  }
  return labels;
}

/**
 * The Mermaid source with the inspector's corrections: a parallel step it labels waiting is moved
 * from toMermaid's `running` class to `waiting`, so the diagram and the tables agree.
 */
export function correctDiagram(source: string, labels: Map<string, StepLabel>, s: Snapshot): string {
  const moved = [...labels]
    .filter(([id, label]) => label === 'waiting' && stepState(s, id) === 'running')
    .map(([id]) => nodeIds.step(id));
  if (!moved.length) return source;
  const lines = source.split('\n').flatMap((line) => {
    const m = /^(\s*)class (\S+) running$/.exec(line);
    if (!m) return [line];
    const kept = (m[2] ?? '').split(',').filter((n) => !moved.includes(n));
    return kept.length ? [`${m[1]}class ${kept.join(',')} running`] : [];
  });
  const end = lines.length && lines[lines.length - 1] === '' ? lines.length - 1 : lines.length;
  lines.splice(end, 0, `  class ${moved.join(',')} waiting`);
  return lines.join('\n');
}
