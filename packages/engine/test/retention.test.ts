import {
  createMemoryPayloadStore,
  createMemoryStore,
  makeTestSnapshot,
  sha256Hex,
  sweepRetention,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import type { Snapshot, Store } from '../src/index.js';
import { keepsAChildWhileItsParentRuns } from './retention-children.js';

const at = (id: string, status: Snapshot['status'], updatedAt: number) =>
  makeTestSnapshot(id, { status, updatedAt });
// Payloads are named by their content's hash; each test's bodies are one of these.
const BIG = sha256Hex('"big"');
const KEPT = sha256Hex('"kept"');

async function seeded(): Promise<Store> {
  const store = createMemoryStore();
  for (const s of [
    at('old-done', 'completed', 100),
    at('old-failed', 'failed', 100),
    at('old-cancelled', 'cancelled', 100),
    at('old-running', 'running', 100),
    at('old-waiting', 'waiting', 100),
    at('new-done', 'completed', 5_000),
  ])
    await store.create(s);
  return store;
}
const ids = async (store: Store) => (await store.list({ limit: 100 })).items.map((s) => s.id);

describe('sweepRetention', () => {
  it('deletes old finished instances with their payloads; recent and unfinished ones stay', async () => {
    const store = await seeded();
    const payloads = createMemoryPayloadStore();
    await payloads.put('old-done', BIG, '"big"');
    await payloads.put('new-done', KEPT, '"kept"');
    const r = await sweepRetention({ store, olderThanMs: 1_000, now: 6_000, action: 'delete', payloads });
    expect(r).toEqual({ deleted: 3, archived: 0, payloads: 1, conflicts: 0, keptChildren: 0, more: false });
    expect(await ids(store)).toEqual(['new-done', 'old-running', 'old-waiting']);
    expect(await payloads.get('old-done', BIG)).toBeNull();
    expect(await payloads.get('new-done', KEPT)).toBe('"kept"');
  });

  it('archives: created in the archive (an older archived copy overwritten), then removed; payloads stay', async () => {
    const store = await seeded();
    const archive = createMemoryStore();
    await archive.create(at('old-done', 'completed', 50)); // archived by an earlier sweep, at version 1
    await store.save({ ...at('old-done', 'completed', 100), version: 2 }, 1);
    const payloads = createMemoryPayloadStore();
    await payloads.put('old-done', BIG, '"big"');
    const r = await sweepRetention({ store, olderThanMs: 1_000, now: 6_000, action: { archive }, payloads });
    expect(r).toMatchObject({ deleted: 0, archived: 3, payloads: 0, conflicts: 0 });
    expect(await ids(archive)).toEqual(['old-cancelled', 'old-done', 'old-failed']);
    expect((await archive.load('old-done'))?.version).toBe(2);
    expect(await payloads.get('old-done', BIG)).toBe('"big"');
  });

  it('takes streams along: deleted with their instance, or copied to the archive without superseded chunks', async () => {
    const stream = (s: Store) => s.stream!;
    const entries = async (s: Store, id: string) =>
      (await stream(s).read(id)).entries.map((e) => [
        e.step,
        e.attempt,
        e.type === 'chunk' ? e.data : 'reset',
      ]);
    const store = await seeded();
    await stream(store).append('old-done', 'model', 1, ['lost', 'to', 'a retry']);
    await stream(store).append('old-done', 'model', 2, ['kept']);
    await stream(store).append('old-done', 'tool', 1, [{ result: 1 }]);
    await stream(store).append('new-done', 'model', 1, ['stays']);
    const archive = createMemoryStore();
    // A partial copy an interrupted sweep left is replaced.
    await stream(archive).append('old-done', 'model', 1, ['partial']);
    await sweepRetention({ store, olderThanMs: 1_000, now: 6_000, action: { archive } });
    expect(await entries(archive, 'old-done')).toEqual([
      ['model', 2, 'reset'],
      ['model', 2, 'kept'],
      ['tool', 1, { result: 1 }],
    ]);
    expect(await entries(store, 'old-done')).toEqual([]);
    expect(await entries(store, 'new-done')).toEqual([['model', 1, 'stays']]);
    await sweepRetention({ store: archive, olderThanMs: 1_000, now: 6_000, action: 'delete' });
    expect(await entries(archive, 'old-done')).toEqual([]);
  });

  it('an instance restarted mid-sweep (its version raised after the read) is not deleted', async () => {
    const inner = await seeded();
    // Between the sweep's list and its delete, a reuseFinished start saves over old-done.
    const store: Store = {
      ...inner,
      async delete(id, o) {
        if (id === 'old-done') await inner.save({ ...at('old-done', 'running', 5_900), version: 2 }, 1);
        return inner.delete(id, o);
      },
    };
    const r = await sweepRetention({ store, olderThanMs: 1_000, now: 6_000, action: 'delete' });
    expect(r).toMatchObject({ deleted: 2, conflicts: 1 });
    expect(await inner.load('old-done')).toMatchObject({ version: 2, status: 'running' });
  });

  it('stops at limit and says there is more; a workflow filter narrows it', async () => {
    const store = await seeded();
    const first = await sweepRetention({ store, olderThanMs: 1_000, now: 6_000, action: 'delete', limit: 2 });
    expect(first).toMatchObject({ deleted: 2, more: true });
    const second = await sweepRetention({
      store,
      olderThanMs: 1_000,
      now: 6_000,
      action: 'delete',
      limit: 2,
    });
    expect(second).toMatchObject({ deleted: 1, more: false });
    const other = await seeded();
    expect(
      await sweepRetention({ store: other, olderThanMs: 0, now: 6_000, action: 'delete', workflow: 'nope' }),
    ).toMatchObject({ deleted: 0 });
  });
});

describe('sweepRetention and child workflows', () => {
  it("keeps a finished child while its parent runs, so the parent's cancel still reverts it", () =>
    keepsAChildWhileItsParentRuns(createMemoryStore()));

  it('keeps a grandchild while any parent up its chain runs; one whose parent is gone goes', async () => {
    const store = createMemoryStore();
    const ref = (id: string) => ({ id, workflow: 'w', step: 's', key: `${id}/1/s/1` });
    await store.create(at('top', 'waiting', 100));
    await store.create({ ...at('mid', 'completed', 100), parent: ref('top') });
    await store.create({ ...at('low', 'completed', 100), parent: ref('mid') });
    await store.create({ ...at('orphan', 'completed', 100), parent: ref('gone') });
    const archive = createMemoryStore();
    const r = await sweepRetention({ store, olderThanMs: 1_000, now: 6_000, action: { archive } });
    expect(r).toMatchObject({ archived: 1, keptChildren: 2 });
    expect(await ids(store)).toEqual(['low', 'mid', 'top']);
    expect(await ids(archive)).toEqual(['orphan']);
  });
});
