import { expect, it } from 'vitest';
import { isStepfoldError } from '../../errors.js';
import type { SearchValue } from '../../search.js';
import type { Snapshot, Status } from '../../snapshot.js';
import type { ListQuery, Store } from '../../store/store.js';
import { makeTestSnapshot } from '../test-snapshot.js';
import type { SuiteContext } from './context.js';

/** Ids of every page of a query, following cursors; fails on a repeated id or a runaway cursor. */
async function ids(store: Store, query: Omit<ListQuery, 'cursor' | 'limit'>, limit = 2): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 200; page++) {
    const result: { items: Snapshot[]; cursor: string | null } = await store.list({
      ...query,
      limit,
      cursor,
    });
    expect(result.items.length).toBeLessThanOrEqual(limit);
    out.push(...result.items.map((s) => s.id));
    if (result.cursor === null) {
      expect(new Set(out).size).toBe(out.length);
      return out;
    }
    cursor = result.cursor;
  }
  throw new Error('list did not finish within 200 pages');
}

/** An instance with these search attributes (none: without the field). */
function withSearch(
  id: string,
  search: Record<string, SearchValue> | undefined,
  more: { status?: Status; workflow?: string } = {},
): Snapshot {
  return makeTestSnapshot(id, {
    ...(search ? { search } : {}),
    ...(more.status ? { status: more.status } : {}),
    ...(more.workflow ? { workflow: { name: more.workflow, version: 1, hash: 'h' } } : {}),
  });
}

// Values of every kind, with look-alikes across kinds ('1' and 1, true and 1, '' and 0).
const ROWS: Array<
  [string, Record<string, SearchValue> | undefined, { status?: Status; workflow?: string }?]
> = [
  ['i-01', { customerId: '42', total: 100, vip: true }, { status: 'waiting' }],
  ['i-02', { customerId: '42', total: 5.5 }, { status: 'completed' }],
  ['i-03', { customerId: '7', total: -20, vip: false }],
  ['i-04', { customerId: '42', total: 1e12 }, { status: 'waiting', workflow: 'other' }],
  ['i-05', { customerId: 'x', total: 0 }],
  ['i-06', undefined],
  ['i-07', { customerId: '', total: 100 }, { status: 'waiting' }],
  ['i-08', { customerId: '1', total: 1, vip: true }],
  ['i-09', { total: '100' }],
  ['i-10', { customerId: 'Ä', total: 100.25 }, { status: 'waiting' }],
];

/** `list`'s `where` and `orderBy` on search attributes and the built-ins, paged, kept up to date. */
export function describeSearch({ fresh }: SuiteContext): void {
  const seeded = async () => {
    const store = await fresh();
    for (const [id, search, more] of ROWS) await store.create(withSearch(id, search, more));
    return store;
  };

  it('equality on an attribute lists exactly the matching instances, in id order, across pages', async () => {
    const store = await seeded();
    expect(await ids(store, { where: { customerId: '42' } })).toEqual(['i-01', 'i-02', 'i-04']);
    expect(await ids(store, { where: { customerId: { eq: '' } } })).toEqual(['i-07']);
    expect(await ids(store, { where: { vip: true } }, 1)).toEqual(['i-01', 'i-08']);
    expect(await ids(store, { where: { customerId: 'nobody' } })).toEqual([]);
    expect(await ids(store, { where: { missing: 'x' } })).toEqual([]);
  });

  it('kinds never match across: "1" is not 1, true is not 1, "100" is not 100', async () => {
    const store = await seeded();
    expect(await ids(store, { where: { customerId: 1 } })).toEqual([]);
    expect(await ids(store, { where: { vip: 1 } })).toEqual([]);
    expect(await ids(store, { where: { total: 100 } })).toEqual(['i-01', 'i-07']);
    expect(await ids(store, { where: { total: '100' } })).toEqual(['i-09']);
    expect(await ids(store, { where: { total: { gte: 0 } } }, 3)).toEqual([
      'i-01',
      'i-02',
      'i-04',
      'i-05',
      'i-07',
      'i-08',
      'i-10',
    ]);
  });

  it('ranges: gt, gte, lt, lte, alone and together', async () => {
    const store = await seeded();
    expect(await ids(store, { where: { total: { gt: 100 } } })).toEqual(['i-04', 'i-10']);
    expect(await ids(store, { where: { total: { gte: 100, lt: 1000 } } })).toEqual(['i-01', 'i-07', 'i-10']);
    expect(await ids(store, { where: { total: { lt: 1 } } })).toEqual(['i-03', 'i-05']);
    expect(await ids(store, { where: { total: { lte: 1, gt: -20 } } })).toEqual(['i-05', 'i-08']);
    expect(await ids(store, { where: { customerId: { gte: '42', lt: 'x' } } })).toEqual([
      'i-01',
      'i-02',
      'i-03',
      'i-04',
    ]);
  });

  it('in: any of the values, of any kind', async () => {
    const store = await seeded();
    expect(await ids(store, { where: { customerId: { in: ['7', 'x', 'none'] } } })).toEqual(['i-03', 'i-05']);
    expect(await ids(store, { where: { total: { in: [0, '100', 5.5] } } })).toEqual(['i-02', 'i-05', 'i-09']);
    expect(await ids(store, { where: { total: { in: [] } } })).toEqual([]);
  });

  it('several conditions and the built-ins all hold', async () => {
    const store = await seeded();
    expect(await ids(store, { where: { customerId: '42', status: 'waiting' } })).toEqual(['i-01', 'i-04']);
    expect(await ids(store, { where: { customerId: '42', workflow: 'conformance' } })).toEqual([
      'i-01',
      'i-02',
    ]);
    expect(await ids(store, { status: 'waiting', where: { total: { gte: 100 } } })).toEqual([
      'i-01',
      'i-04',
      'i-07',
      'i-10',
    ]);
    expect(
      await ids(store, {
        where: { status: { in: ['completed', 'running'] }, customerId: { in: ['42', '7'] } },
      }),
    ).toEqual(['i-02', 'i-03']);
    expect(await ids(store, { status: 'running', where: { status: 'waiting' } })).toEqual([]);
    expect(await ids(store, { where: { total: { gt: 0 }, vip: true } })).toEqual(['i-01', 'i-08']);
  });

  it('orderBy an attribute: only instances that have it, by value then id, either way, across pages', async () => {
    const store = await seeded();
    const asc = ['i-03', 'i-05', 'i-08', 'i-02', 'i-01', 'i-07', 'i-10', 'i-04', 'i-09'];
    expect(await ids(store, { orderBy: 'total' })).toEqual(asc);
    expect(await ids(store, { orderBy: { field: 'total' } }, 4)).toEqual(asc);
    expect(await ids(store, { orderBy: { field: 'total', desc: true } }, 3)).toEqual([...asc].reverse());
    // Booleans first (false, true), then numbers, then strings.
    expect(await ids(store, { orderBy: 'vip' })).toEqual(['i-03', 'i-01', 'i-08']);
    expect(
      await ids(store, { where: { customerId: '42' }, orderBy: { field: 'total', desc: true } }, 1),
    ).toEqual(['i-04', 'i-01', 'i-02']);
    expect(await ids(store, { where: { total: { gte: 100 } }, orderBy: 'customerId' })).toEqual([
      'i-07',
      'i-01',
      'i-04',
      'i-10',
    ]); // Filtered and ordered by the same attribute: a range, and `in` of values of two kinds.
    const inRange = ['i-08', 'i-02', 'i-01', 'i-07', 'i-10'];
    expect(await ids(store, { where: { total: { gte: 1, lt: 1e12 } }, orderBy: 'total' })).toEqual(inRange);
    expect(
      await ids(
        store,
        { where: { total: { gte: 1, lt: 1e12 } }, orderBy: { field: 'total', desc: true } },
        3,
      ),
    ).toEqual([...inRange].reverse());
    expect(await ids(store, { where: { total: { in: ['100', 100, 5.5] } }, orderBy: 'total' }, 1)).toEqual([
      'i-02',
      'i-01',
      'i-07',
      'i-09',
    ]);
  });

  it('orderBy id descending, with a filter, across pages', async () => {
    const store = await seeded();
    expect(
      await ids(store, { where: { total: { gte: 100 } }, orderBy: { field: 'id', desc: true } }),
    ).toEqual(['i-10', 'i-07', 'i-04', 'i-01']);
  });

  it('a save moves an instance between results; a cleared attribute takes it out', async () => {
    const store = await seeded();
    const s = (await store.load('i-03'))!;
    await store.save({ ...s, version: 2, search: { customerId: '42', total: 7 } }, 1);
    expect(await ids(store, { where: { customerId: '42' } })).toEqual(['i-01', 'i-02', 'i-03', 'i-04']);
    expect(await ids(store, { where: { customerId: '7' } })).toEqual([]);
    expect(await ids(store, { where: { vip: false } })).toEqual([]);
    const t = (await store.load('i-03'))!;
    const { search: _gone, ...bare } = t;
    await store.save({ ...bare, version: 3 }, 2);
    expect(await ids(store, { where: { customerId: '42' } })).toEqual(['i-01', 'i-02', 'i-04']);
    expect(await ids(store, { orderBy: 'total' })).not.toContain('i-03');
    // A status change is seen by where.status at once.
    const w = (await store.load('i-05'))!;
    await store.save({ ...w, version: 2, status: 'waiting' }, 1);
    expect(await ids(store, { where: { status: 'waiting', total: 0 } })).toEqual(['i-05']);
  });

  it('a deleted instance leaves every result; its id created again carries only its new values', async () => {
    const store = await seeded();
    expect(await store.delete('i-01')).toBe(true);
    expect(await ids(store, { where: { customerId: '42' } })).toEqual(['i-02', 'i-04']);
    expect(await ids(store, { where: { vip: true } })).toEqual(['i-08']);
    await store.create(withSearch('i-01', { customerId: '9' }));
    expect(await ids(store, { where: { customerId: '42' } })).toEqual(['i-02', 'i-04']);
    expect(await ids(store, { where: { customerId: '9' } })).toEqual(['i-01']);
    expect(await ids(store, { orderBy: 'total' })).not.toContain('i-01');
  });

  it('values at the edges round-trip and match: long text, unicode, negative and fractional numbers', async () => {
    const store = await fresh();
    const long = 'é'.repeat(256);
    await store.create(withSearch('e-1', { name: long, n: -0.000001, big: Number.MAX_SAFE_INTEGER }));
    await store.create(
      withSearch('e-2', { name: 'a\'b"c\\d', n: 2 ** 52 + 0.5, big: -Number.MAX_SAFE_INTEGER }),
    );
    expect((await store.load('e-1'))?.search).toEqual({
      name: long,
      n: -0.000001,
      big: Number.MAX_SAFE_INTEGER,
    });
    expect(await ids(store, { where: { name: long } })).toEqual(['e-1']);
    expect(await ids(store, { where: { name: 'a\'b"c\\d' } })).toEqual(['e-2']);
    expect(await ids(store, { where: { n: { lt: 0 } } })).toEqual(['e-1']);
    expect(await ids(store, { where: { big: Number.MAX_SAFE_INTEGER } })).toEqual(['e-1']);
    expect(await ids(store, { orderBy: 'big' })).toEqual(['e-2', 'e-1']);
  });

  it('refuses malformed queries with INVALID_QUERY and a snapshot with bad values with INVALID_SNAPSHOT', async () => {
    const store = await seeded();
    const code = async (p: Promise<unknown>) =>
      p.then(
        () => 'resolved',
        (e: unknown) => (isStepfoldError(e) ? e.code : String(e)),
      );
    expect(await code(store.list({ limit: 5, where: { total: { near: 3 } as never } }))).toBe(
      'INVALID_QUERY',
    );
    expect(await code(store.list({ limit: 5, where: { total: { in: 'x' as never } } }))).toBe(
      'INVALID_QUERY',
    );
    expect(await code(store.list({ limit: 5, where: { total: Number.NaN } }))).toBe('INVALID_QUERY');
    expect(await code(store.list({ limit: 5, where: { 'bad name': 1 } }))).toBe('INVALID_QUERY');
    expect(await code(store.list({ limit: 5, orderBy: 'no such' }))).toBe('INVALID_QUERY');
    expect(await code(store.list({ limit: 5, orderBy: 'total', cursor: 'i-01' }))).toBe('INVALID_QUERY');
    const bad = withSearch('bad-1', { total: [1] as never });
    expect(await code(store.create(bad))).toBe('INVALID_SNAPSHOT');
    expect(await store.load('bad-1')).toBeNull();
  });
}
