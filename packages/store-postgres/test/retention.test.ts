import {
  composition,
  createRunner,
  defineWorkflow,
  makeTestSnapshot,
  sweepRetention,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
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
  const leaf = defineWorkflow({
    name: 'leaf',
    version: 1,
    start: 'work',
    steps: { work: { kind: 'task', handler: 'work', compensate: 'undoWork' } },
  });
  const held = defineWorkflow({
    name: 'held',
    version: 1,
    start: 'sub',
    steps: {
      sub: { kind: 'child', workflow: 'leaf', next: 'gate' },
      gate: { kind: 'wait', signal: 'go' },
    },
  });

  it("keeps a finished child while its parent runs, so the parent's cancel still reverts it", async () => {
    const live = await store();
    const undone: string[] = [];
    const runner = createRunner({
      kinds: [composition],
      store: live,
      workflows: [leaf, held],
      handlers: {
        work: () => ({ done: true }),
        undoWork: ({ instanceId }) => {
          undone.push(instanceId);
        },
      },
    });
    const parent = await runner.start('held', 'p-1');
    const childId = parent.steps['sub']!.child!.id;
    const later = Date.now() + 60_000;
    const r = await sweepRetention({ store: live, olderThanMs: 0, now: later, action: 'delete' });
    expect(r).toMatchObject({ deleted: 0, keptChildren: 1 });
    expect((await runner.cancel('p-1')).status).toBe('cancelled');
    expect(undone).toEqual([childId]);
    const again = await sweepRetention({ store: live, olderThanMs: 0, now: later, action: 'delete' });
    expect(again).toMatchObject({ deleted: 2, keptChildren: 0 });
  });
});
