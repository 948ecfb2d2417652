import { expect, it } from 'vitest';
import { makeTestSnapshot } from '../test-snapshot.js';
import type { SuiteContext } from './context.js';

const wf = (name: string) => ({ name, version: 1, hash: 'h' });

/** Per-workflow lanes of `listDue`: every store. */
export function describeDueLanes({ fresh }: SuiteContext): void {
  it('listDue with a workflow gives only that workflow, earliest first', async () => {
    const store = await fresh();
    const rows: Array<[string, string, number | null]> = [
      ['lane-a1', 'flood', 5],
      ['lane-b1', 'quiet', 7],
      ['lane-a2', 'flood', 1],
      ['lane-b2', 'quiet', 3],
      ['lane-b3', 'quiet', null],
      ['lane-b4', 'quiet', 2000],
    ];
    for (const [id, name, wakeAt] of rows)
      await store.create(makeTestSnapshot(id, { workflow: wf(name), wakeAt }));
    expect(await store.listDue(100, 10, { workflow: 'quiet' })).toEqual(['lane-b2', 'lane-b1']);
    expect(await store.listDue(100, 1, { workflow: 'flood' })).toEqual(['lane-a2']);
    expect(await store.listDue(100, 10, { workflow: 'no-such-workflow' })).toEqual([]);
    expect(await store.listDue(100, 10, { workflow: 'not a valid id \u0000' })).toEqual([]);
  });
}
