import { makeTestSnapshot, sweepRetention } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { keepsAChildWhileItsParentRuns } from '../../engine/test/retention-children.js';
import { useTestTables } from './test-tables.js';

// Retention on PostgreSQL: the conditional delete is the store's, so a restart between the sweep's
// read and its delete keeps the instance.

const { store } = useTestTables('ret');

describe('sweepRetention on postgres', () => {
  it('old finished instances go (deleted or archived); recent, running and restarted ones stay', async () => {
    const live = await store();
    const archive = await store();
    for (let i = 0; i < 250; i++)
      await live.create(makeTestSnapshot(`old-${i}`, { status: 'completed', updatedAt: 100 }));
    await live.create(makeTestSnapshot('recent', { status: 'completed', updatedAt: 9_000 }));
    await live.create(makeTestSnapshot('running', { status: 'running', updatedAt: 100 }));
    await live.create(makeTestSnapshot('restarted', { status: 'failed', updatedAt: 100 }));
    // A reuseFinished start lands between the sweep's read and its delete of `restarted`.
    const racing = {
      ...live,
      async delete(id: string, o?: { version?: number }) {
        if (id === 'restarted')
          await live.save(makeTestSnapshot('restarted', { version: 2, updatedAt: 9_500 }), 1);
        return live.delete(id, o);
      },
    };
    const r = await sweepRetention({ store: racing, olderThanMs: 1_000, now: 10_000, action: { archive } });
    expect(r).toMatchObject({ archived: 250, conflicts: 1, more: false });
    const left = (await live.list({ limit: 10 })).items.map((s) => s.id);
    expect(left).toEqual(['recent', 'restarted', 'running']);
    expect((await archive.list({ limit: 1000 })).items).toHaveLength(251); // the restarted one's copy too, harmless
    const again = await sweepRetention({
      store: archive,
      olderThanMs: 1_000,
      now: 10_000,
      action: 'delete',
      limit: 100,
    });
    expect(again).toMatchObject({ deleted: 100, more: true });
  });
});

describe('sweepRetention and child workflows on postgres', () => {
  it("keeps a finished child while its parent runs, so the parent's cancel still reverts it", async () =>
    keepsAChildWhileItsParentRuns(await store()));
});
