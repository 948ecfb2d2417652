import { mapProgress, mapProgressText } from '../definition/child-refs.js';
import type { StepKind, StepOf } from '../definition/schema.js';
import { type DiagramKind, nodeIds } from './kind.js';
import { conditionText, duration, escapeLabel as e } from './text.js';

/** How the diagram draws every step kind, keyed by kind: one row per kind. */
export type DiagramKinds = { readonly [K in StepKind]: DiagramKind<StepOf<K> & { id: string }> };

/** Longest live line: a child id is up to 200 characters, and its tail (the iteration) tells most. */
const LIVE_LABEL = 90;

const timeout = (ms: number | undefined) => (ms === undefined ? '' : ` · timeout ${duration(ms)}`);

/**
 * Every step kind's shape, label and edges. Keyed by the definition's {@link StepKind}: a kind
 * added to the definition's list does not compile until it has its row here.
 */
export const DIAGRAM_KINDS: DiagramKinds = {
  task: {
    shape: ['[', ']'],
    label(step) {
      const flags = [
        ...(step.pivot ? ['pivot'] : []),
        ...(step.onFailure ? [`on failure: ${step.onFailure}`] : []),
      ];
      return `${e(`${step.handler}()`)}${flags.map((f) => ` · ${e(f)}`).join('')}`;
    },
  },
  choice: {
    shape: ['{', '}'],
    label: () => 'choice',
    edges(step, edges) {
      for (const b of step.branches) {
        edges.add({ to: nodeIds.step(b.next), arrow: '-->', label: e(conditionText(b.when)) });
      }
      edges.add(
        step.otherwise === undefined
          ? { to: nodeIds.failed, arrow: '-.->', label: 'no branch matched' }
          : { to: nodeIds.step(step.otherwise), arrow: '-->', label: 'otherwise' },
      );
    },
  },
  parallel: {
    shape: ['{{', '}}'],
    label: (step) => `parallel · ${joinText(step.join)}`,
    edges(step, edges) {
      step.branches.forEach((entry, i) => {
        edges.add({ to: nodeIds.step(entry), arrow: '-->', label: `branch ${i + 1}`, fork: true });
      });
      const to = step.next === undefined ? edges.end : nodeIds.step(step.next);
      edges.add({ from: nodeIds.join(step.id), to, arrow: '-->' });
    },
    join: (step) => joinText(step.join),
  },
  wait: {
    shape: ['[/', '/]'],
    label: (step) => `wait for ${e(step.signal)}${timeout(step.timeoutMs)}`,
    edges(step, edges) {
      edges.next();
      edges.timeout(step.timeoutMs, step.onTimeout);
    },
  },
  human: {
    shape: ['[/', '\\]'],
    label: (step) => `human: ${e(step.signal ?? step.id)}${timeout(step.timeoutMs)}`,
    edges(step, edges) {
      edges.next('approve');
      edges.add({ to: nodeIds.failed, arrow: '-.->', label: 'reject' });
      edges.timeout(step.timeoutMs, step.onTimeout);
    },
  },
  sleep: {
    shape: ['(', ')'],
    label: (step) =>
      step.until === undefined ? `sleep ${duration(step.ms ?? 0)}` : `sleep until ${e(step.until)}`,
  },
  collect: {
    shape: ['[(', ')]'],
    label(step) {
      const parts = [
        ...(step.maxItems === undefined ? [] : [`max ${step.maxItems}`]),
        ...(step.idleMs === undefined ? [] : [`idle ${duration(step.idleMs)}`]),
        ...(step.maxWaitMs === undefined ? [] : [`max wait ${duration(step.maxWaitMs)}`]),
        ...(step.drain === true ? ['drain'] : []),
      ];
      return `collect ${e(step.signal)}${parts.map((p) => ` · ${p}`).join('')}`;
    },
  },
  savepoint: { shape: ['[[', ']]'], label: () => 'savepoint' },
  continueAsNew: {
    shape: ['>', ']'],
    label: () => 'continue as new',
    edges: (_step, edges) => edges.add({ to: nodeIds.start, arrow: '-.->', label: 'next run' }),
  },
  // Its edge goes where its path ends: the workflow's end, or its branch's join.
  succeed: { shape: ['([', '])'], label: () => 'succeed' },
  fail: {
    shape: ['[\\', '/]'],
    label: (step) => (step.error?.code === undefined ? 'fail' : `fail: ${e(step.error.code)}`),
    edges: (_step, edges) => edges.add({ to: nodeIds.failed, arrow: '-->' }),
  },
  child: {
    shape: ['[[', ']]'],
    label(step) {
      const flags = [
        ...(step.pivot ? ['pivot'] : []),
        ...(step.onFailure ? [`on failure: ${step.onFailure}`] : []),
      ];
      return `child ${e(step.workflow)}${flags.map((f) => ` · ${e(f)}`).join('')}`;
    },
    // The child instance this iteration started, and its own status when the caller loaded it.
    live(_step, { state, children }) {
      if (!state.child) return undefined;
      const status = Object.hasOwn(children, state.child.id) ? children[state.child.id] : undefined;
      return `→ ${e(state.child.id, LIVE_LABEL)}${status ? ` · ${e(status)}` : ''}`;
    },
  },
  map: {
    shape: ['[[', ']]'],
    label(step) {
      const what = step.workflow === undefined ? `${step.handler}()` : `child ${step.workflow}`;
      return `map ${e(step.items)} · ${e(what)} · ${step.maxConcurrency ?? 10} at a time`;
    },
    // Counts only: the state is O(maxConcurrency), and so is this line, whatever the item count.
    // Digits and fixed words: nothing to escape.
    live: (_step, { state }) => (state.map ? mapProgressText(mapProgress(state.map)) : undefined),
  },
};

/** A parallel step's join rule in words: `join all`, `join any`, `join at least 2`. */
export function joinText(join: StepOf<'parallel'>['join']): string {
  if (join === undefined || join === 'all') return 'join all';
  if (join === 'any') return 'join any';
  return `join at least ${join.atLeast}`;
}
