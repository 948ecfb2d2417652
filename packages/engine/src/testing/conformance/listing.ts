import { expect, it } from 'vitest';
import type { Snapshot, Status } from '../../snapshot.js';
import type { ListQuery, Store } from '../../store/store.js';
import { makeTestSnapshot } from '../test-snapshot.js';
import type { SuiteContext } from './context.js';

/** Every page of a query, following cursors; fails on a repeated id or a runaway cursor. */
async function allPages(store: Store, query: Omit<ListQuery, 'cursor'>): Promise<Snapshot[]> {
  const out: Snapshot[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    const result: { items: Snapshot[]; cursor: string | null } = await store.list({ ...query, cursor });
    expect(result.items.length).toBeLessThanOrEqual(query.limit);
    out.push(...result.items);
    if (result.cursor === null) return out;
    expect(result.items.length).toBe(query.limit);
    cursor = result.cursor;
  }
  throw new Error('list did not finish within 100 pages');
}

// Ids whose order differs between byte order and a locale collation: the stores must use byte order.
const LIST_IDS = [
  'A1',
  'B0',
  'a-1',
  'a.1',
  'a/1',
  'a1',
  'a:1',
  'a=1',
  'a@1',
  'a_1',
  'a+1',
  'b',
  'b-',
  'Z',
  '0',
  '9z',
];
const STATUSES: Status[] = ['running', 'waiting', 'completed'];

/** `listDue` order, limit and index upkeep; `list` filters and cursor paging. */
export function describeListing({ options, fresh }: SuiteContext): void {
  const dueRows: Array<[string, number | null]> = [
    ['due-c', 300],
    ['due-a', 100],
    ['never', null],
    ['due-d', 1000], // exactly now: due
    ['due-b', 100], // same time as due-a: ties by id
    ['later', 1001],
    ['due-e', -5],
  ];
  const seedDue = async (store: Store) => {
    for (const [id, wakeAt] of dueRows) await store.create(makeTestSnapshot(id, { wakeAt }));
  };

  it('listDue gives instances with wakeAt <= now, earliest first (ties by id)', async () => {
    const store = await fresh();
    await seedDue(store);
    expect(await store.listDue(1000, 50)).toEqual(['due-e', 'due-a', 'due-b', 'due-c', 'due-d']);
  });

  it('listDue honours the limit, taking the earliest', async () => {
    const store = await fresh();
    await seedDue(store);
    expect(await store.listDue(1000, 2)).toEqual(['due-e', 'due-a']);
    const none = await fresh();
    await none.create(makeTestSnapshot('future', { wakeAt: 5000 }));
    expect(await none.listDue(1000, 10)).toEqual([]);
  });

  it('listDue follows saves that move, clear or set wakeAt', async () => {
    const store = await fresh();
    await store.create(makeTestSnapshot('moves-in', { wakeAt: null }));
    await store.create(makeTestSnapshot('moves-out', { wakeAt: 50 }));
    await store.create(makeTestSnapshot('moves-later', { wakeAt: 60 }));
    await store.save(makeTestSnapshot('moves-in', { version: 2, wakeAt: 10 }), 1);
    await store.save(makeTestSnapshot('moves-out', { version: 2, wakeAt: null }), 1);
    await store.save(makeTestSnapshot('moves-later', { version: 2, wakeAt: 5000 }), 1);
    expect(await store.listDue(100, 10)).toEqual(['moves-in']);
  });

  if (options.capabilities.includes('claims')) {
    it('concurrent listDue calls claim disjoint batches that together cover every due id', async () => {
      const store = await fresh();
      const ids = Array.from({ length: 12 }, (_, i) => `claim-${String(i).padStart(2, '0')}`);
      for (const [i, id] of ids.entries()) await store.create(makeTestSnapshot(id, { wakeAt: i }));
      const batches = await Promise.all([
        store.listDue(100, 5),
        store.listDue(100, 5),
        store.listDue(100, 5),
      ]);
      const all = batches.flat();
      expect(new Set(all).size).toBe(all.length);
      expect(all.sort()).toEqual(ids);
    });
  }

  it('list filters by status and workflow and pages by cursor in id (byte) order', async () => {
    const store = await fresh();
    const made: Snapshot[] = LIST_IDS.map((id, i) =>
      makeTestSnapshot(id, {
        status: STATUSES[i % 3] as Status,
        workflow: { name: i % 2 ? 'wf-odd' : 'wf-even', version: 1, hash: 'h' },
        input: { i },
      }),
    );
    for (const s of made) await store.create(s);
    const byId = [...made].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const queries: Array<Omit<ListQuery, 'cursor'>> = [
      { limit: 4 },
      { limit: 1 },
      { limit: 100 },
      { limit: 3, status: 'waiting' },
      { limit: 2, workflow: 'wf-odd' },
      { limit: 2, status: 'completed', workflow: 'wf-even' },
      { limit: 5, status: 'failed' },
      { limit: 5, workflow: 'no-such-workflow' },
    ];
    for (const q of queries) {
      const want = byId.filter(
        (s) => (!q.status || s.status === q.status) && (!q.workflow || s.workflow.name === q.workflow),
      );
      const got = await allPages(store, q);
      expect(
        got.map((s) => s.id),
        JSON.stringify(q),
      ).toEqual(want.map((s) => s.id));
      expect(got).toEqual(want);
    }
  });

  it('list follows status changes made by save', async () => {
    const store = await fresh();
    await store.create(makeTestSnapshot('st-1', { status: 'running' }));
    await store.create(makeTestSnapshot('st-2', { status: 'running' }));
    await store.save(makeTestSnapshot('st-1', { version: 2, status: 'completed' }), 1);
    expect((await store.list({ limit: 10, status: 'running' })).items.map((s) => s.id)).toEqual(['st-2']);
    const done = await store.list({ limit: 10, status: 'completed' });
    expect(done).toEqual({
      items: [makeTestSnapshot('st-1', { version: 2, status: 'completed' })],
      cursor: null,
    });
  });
}
