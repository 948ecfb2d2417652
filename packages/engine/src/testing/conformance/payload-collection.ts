import { expect, it } from 'vitest';
import { sha256Hex } from '../../content-hash.js';
import { listAll, putBody } from './payload-basics.js';
import { jsonOfBytes, type PayloadSuiteContext } from './payload-context.js';

const bodies = (n: number, tag: string) => Array.from({ length: n }, (_, i) => JSON.stringify({ tag, i }));

/** Listing, deleting, collecting an owner, a large body and many owners. */
export function describePayloadCollection({ fresh }: PayloadSuiteContext): void {
  it('list pages through 25 hashes 10 at a time: ordered, complete, no repeats', async () => {
    const store = await fresh();
    const shas = await Promise.all(bodies(25, 'page').map((b) => putBody(store, 'lister', b)));
    const sorted = [...shas].sort();
    const { items, pages } = await listAll(store, 'lister', 10);
    expect(items).toEqual(sorted);
    expect(pages).toBe(3);
    // A page that ends exactly at the last hash says so: no empty page after it.
    expect(await store.list('lister', { limit: 25 })).toEqual({ items: sorted, cursor: null });
    const first = await store.list('lister', { limit: 24 });
    expect(first).toEqual({ items: sorted.slice(0, 24), cursor: sorted[23] });
    expect(await store.list('lister', { limit: 5, cursor: first.cursor })).toEqual({
      items: [sorted[24]],
      cursor: null,
    });
    // A cursor is a position, not a stored item: one between hashes, or past all, pages on from there.
    expect((await store.list('lister', { limit: 100, cursor: '0'.repeat(64) })).items).toEqual(sorted);
    expect(await store.list('lister', { limit: 100, cursor: 'f'.repeat(64) })).toEqual({
      items: [],
      cursor: null,
    });
    expect((await store.list('lister', { limit: 3, cursor: null })).items).toEqual(sorted.slice(0, 3));
  });

  it('delete removes the named payloads (missing and repeated ones counted once) and nothing else', async () => {
    const store = await fresh();
    const shas = await Promise.all(bodies(5, 'del').map((b) => putBody(store, 'deleter', b)));
    const absent = sha256Hex('"never stored"');
    expect(await store.delete('deleter', [shas[0]!, shas[1]!, shas[1]!, absent])).toBe(2);
    expect(await store.delete('deleter', [shas[0]!])).toBe(0);
    expect(await store.delete('deleter', [])).toBe(0);
    expect(await store.get('deleter', shas[0]!)).toBeNull();
    expect(await store.get('deleter', shas[1]!)).toBeNull();
    expect(await store.get('deleter', shas[2]!)).toBe(JSON.stringify({ tag: 'del', i: 2 }));
    expect((await listAll(store, 'deleter', 2)).items).toEqual(shas.slice(2).sort());
    // Deleted payloads can be stored again.
    await putBody(store, 'deleter', JSON.stringify({ tag: 'del', i: 0 }));
    expect(await store.get('deleter', shas[0]!)).toBe(JSON.stringify({ tag: 'del', i: 0 }));
  });

  it("deleteOwner collects one owner's payloads only (not a/b, ab, a/, a. or A)", async () => {
    const store = await fresh();
    const owners = ['a', 'a/b', 'ab', 'a/', 'a.', 'A', 'a/b/c', 'b'];
    for (const owner of owners) for (const b of bodies(3, owner)) await putBody(store, owner, b);
    // The same body under two owners: collecting one leaves the other's copy.
    const shared = await putBody(store, 'a', '"shared"');
    await putBody(store, 'a/b', '"shared"');
    expect(await store.deleteOwner('a')).toBe(4);
    expect(await store.deleteOwner('a')).toBe(0);
    expect(await store.list('a', { limit: 10 })).toEqual({ items: [], cursor: null });
    expect(await store.get('a', shared)).toBeNull();
    expect(await store.get('a/b', shared)).toBe('"shared"');
    for (const owner of owners.slice(1))
      expect((await store.list(owner, { limit: 10 })).items, owner).toHaveLength(owner === 'a/b' ? 4 : 3);
    expect(await store.deleteOwner('never-stored')).toBe(0);
  });

  it('a 2.5 MB body (multi-byte characters throughout) round-trips, twice at once, and is collected', async () => {
    const store = await fresh();
    const size = Math.min(store.maxPayloadBytes, 2.5 * 1024 * 1024);
    const large = jsonOfBytes(size);
    const sha = sha256Hex(large);
    await Promise.all([store.put('large', sha, large), store.put('large', sha, large)]);
    const back = await store.get('large', sha);
    expect(back?.length).toBe(large.length);
    expect(back === large).toBe(true);
    expect(await store.list('large', { limit: 10 })).toEqual({ items: [sha], cursor: null });
    // Bodies just under and over any chunking boundary of 64 KiB multiples.
    const edges = [64, 128, 256, 350, 384, 400, 1024].flatMap((k) => [k * 1024 - 1, k * 1024 + 1]);
    for (const n of edges.filter((x) => x <= store.maxPayloadBytes)) {
      const body = jsonOfBytes(n);
      const h = await putBody(store, 'large', body);
      expect((await store.get('large', h)) === body, `${n} bytes`).toBe(true);
    }
    expect(await store.delete('large', [sha])).toBe(1);
    expect(await store.get('large', sha)).toBeNull();
    expect(await store.deleteOwner('large')).toBe(edges.length);
    expect(await store.list('large', { limit: 100 })).toEqual({ items: [], cursor: null });
  });

  it('many owners at once keep their payloads apart', async () => {
    const store = await fresh();
    const owners = Array.from({ length: 40 }, (_, i) => `order-${i}/child:${i % 3}`);
    await Promise.all(owners.map((o) => Promise.all(bodies(3, o).map((b) => putBody(store, o, b)))));
    for (const o of owners) {
      const { items } = await listAll(store, o, 2);
      expect(items).toEqual(bodies(3, o).map(sha256Hex).sort());
      expect(await store.get(o, sha256Hex(JSON.stringify({ tag: o, i: 1 })))).toBe(
        JSON.stringify({ tag: o, i: 1 }),
      );
    }
    const removed = await Promise.all(owners.map((o) => store.deleteOwner(o)));
    expect(removed).toEqual(owners.map(() => 3));
  });
}
