import type { Snapshot } from '@stepfold/engine';
import {
  childRefs,
  type MapStepRef,
  mapChildId,
  mapChildPrefix,
  mapProgressText,
  nodeIds,
  toMermaid,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { parentAtChild, parentMidway, parentOrder, snapshotOf } from './child-fixtures.js';
import { rollbackOrder, rolledBackOrder } from './map-rollback-fixture.js';
import { decode, useMermaid, type Vertex } from './mermaid-parser.js';

// Child and map steps in the diagram and in `childRefs`, over hand-built snapshots of the shapes
// the composition kinds write. Every diagram goes through the real Mermaid parser (mermaid-parser.ts),
// as in diagram.test.ts.

const parsed = useMermaid();

/** The parsed diagram's vertices (the parser throws on a syntax error). */
async function vertices(snapshot?: Snapshot, children?: Record<string, Snapshot['status']>) {
  const text = toMermaid(parentOrder, snapshot, children ? { children } : {});
  return (await parsed(text)).getVertices();
}

const label = (v: Map<string, Vertex>, step: string) =>
  decode(v.get(nodeIds.step(step))?.text ?? '').split(/<br\/?>/);
const classes = (v: Map<string, Vertex>, step: string) => v.get(nodeIds.step(step))?.classes ?? [];

describe('toMermaid: child and map steps', () => {
  it('without a snapshot: the child names its workflow, the map its items and concurrency', async () => {
    const v = await vertices();
    expect(label(v, 'sub')).toEqual(['sub', 'child ship-line']);
    expect(label(v, 'lines')).toEqual(['lines', 'map input.lines · child ship-line · 20 at a time']);
    expect(label(v, 'sums')).toEqual(['sums', 'map input.numbers · double() · 4 at a time']);
    // Rolling back a child step (or a map of workflows) is the runner's own revert, not a handler.
    expect(decode(v.get(nodeIds.compensation('sub'))?.text ?? '')).toBe('⟲ compensate: revert the child');
    expect(decode(v.get(nodeIds.compensation('lines'))?.text ?? '')).toBe('⟲ compensate: revert each child');
    expect(v.has(nodeIds.compensation('sums'))).toBe(false);
  });

  it('a map shows its counts from the live snapshot, a child its instance id', async () => {
    const v = await vertices(parentMidway('o-1'));
    expect(label(v, 'lines')).toEqual([
      'lines',
      'map input.lines · child ship-line · 20 at a time',
      '37/500 done · 3 failed · 20 running',
    ]);
    expect(classes(v, 'lines')).toContain('running');
    expect(label(v, 'sub')).toEqual(['sub', 'child ship-line', '→ o-1/1/sub/1']);
    expect(classes(v, 'sub')).toContain('done');
    // Not entered yet: no live line, no class.
    expect(label(v, 'sums')).toHaveLength(2);
    expect(classes(v, 'sums')).toEqual([]);
  });

  it("a child step takes its child's status (name and colour) while it is active", async () => {
    const s = parentAtChild('o-2');
    const alone = await vertices(s);
    expect(label(alone, 'sub')).toEqual(['sub', 'child ship-line', '→ o-2/1/sub/1']);
    expect(classes(alone, 'sub')).toContain('running'); // its task is in flight
    const waiting = await vertices(s, { 'o-2/1/sub/1': 'waiting' });
    expect(label(waiting, 'sub')).toEqual(['sub', 'child ship-line', '→ o-2/1/sub/1 · waiting']);
    expect(classes(waiting, 'sub')).toContain('waiting');
    const parked = await vertices(s, { 'o-2/1/sub/1': 'dlq' });
    expect(classes(parked, 'sub')).toContain('failed');
    // Once the step has finished, its own state wins over a child status the caller passes.
    const done = await vertices(parentMidway('o-1'), { 'o-1/1/sub/1': 'waiting' });
    expect(classes(done, 'sub')).toContain('done');
  });

  it('a rollback shows the items still to undo; a hostile child id is escaped and still parses', async () => {
    const s = parentMidway('o-3');
    s.steps['lines']!.status = 'compensating';
    s.steps['lines']!.map = { total: 500, next: 60, running: [], failed: [4], ok: 55, undo: [1, 2, 3] };
    const v = await vertices(s);
    expect(label(v, 'lines')[2]).toBe('55/500 done · 1 failed · 3 to undo');
    expect(classes(v, 'lines')).toContain('compensated');

    const hostile = parentAtChild('x');
    hostile.steps['sub']!.child = { id: 'a"]-->b[<script>|x|' };
    const h = await vertices(hostile);
    expect(label(h, 'sub')[2]).toBe('→ a"]-->b[<script>|x|');
  });
});

describe('toMermaid: a map that rolled back', () => {
  it('says how many completed items the rollback undid, not only that they were done', async () => {
    const [s] = await rolledBackOrder();
    const text = toMermaid(rollbackOrder, s);
    const v = (await parsed(text)).getVertices();
    expect(label(v, 'lines')).toContain('2/3 done · 1 failed · 2 undone');
    expect(classes(v, 'lines')).toContain('compensated');
  });

  it('midway through the rollback: what it undid and what it has left', () => {
    expect(
      mapProgressText({
        total: 3,
        done: 2,
        failed: 1,
        running: 0,
        pending: 0,
        failedItems: [2],
        runningItems: [],
        undone: 1,
        undo: 1,
      }),
    ).toBe('2/3 done · 1 failed · 1 undone · 1 to undo');
  });
});

describe('childRefs', () => {
  it('names each child step and each map, in definition order, with the children prefix', () => {
    const s = parentMidway('o-1');
    const refs = childRefs(parentOrder, s);
    expect(refs.map((r) => `${r.kind} ${r.step}`)).toEqual(['child sub', 'map lines']);
    expect(refs[0]).toEqual({
      kind: 'child',
      step: 'sub',
      status: 'completed',
      workflow: 'ship-line',
      id: 'o-1/1/sub/1',
    });
    const map = refs[1] as MapStepRef;
    expect(map).toMatchObject({ status: 'active', workflow: 'ship-line', prefix: 'o-1/1/lines/1/' });
    expect(map.progress).toEqual({
      total: 500,
      done: 37,
      failed: 3,
      running: 20,
      pending: 440,
      failedItems: [4, 17, 33],
      runningItems: Array.from({ length: 20 }, (_, i) => 40 + i),
    });
    expect(mapProgressText(map.progress)).toBe('37/500 done · 3 failed · 20 running');
    expect(mapChildId(map.prefix!, 4)).toBe('o-1/1/lines/1/4');
  });

  it('without the definition: the prefix from a running child task, or the output once done', () => {
    const s = parentMidway('o-1');
    expect((childRefs(undefined, s)[1] as MapStepRef).prefix).toBe('o-1/1/lines/1/');
    s.tasks = {};
    expect((childRefs(undefined, s)[1] as MapStepRef).prefix).toBeUndefined();
    s.steps['lines']!.output = {
      total: 500,
      completed: 497,
      failed: [4, 17, 33],
      children: 'o-1/1/lines/1/',
    };
    expect((childRefs(undefined, s)[1] as MapStepRef).prefix).toBe('o-1/1/lines/1/');
    expect(mapChildPrefix(snapshotOf(parentOrder, 'p', { run: 3 }), 'lines')).toBe('p/3/lines/1/');
  });

  it('a map of handlers has progress and no children', () => {
    const s = snapshotOf(parentOrder, 'o-9', {
      steps: {
        sums: {
          status: 'active',
          iteration: 2,
          attempt: 0,
          startedAt: 0,
          map: { total: 3, next: 3, running: [2], failed: [], ok: 2 },
        },
      },
    });
    const [ref] = childRefs(parentOrder, s);
    expect(ref).toMatchObject({ kind: 'map', step: 'sums' });
    expect((ref as MapStepRef).prefix).toBeUndefined();
    expect(mapProgressText((ref as MapStepRef).progress)).toBe('2/3 done · 1 running');
  });
});
