import {
  createRunner,
  defineStore,
  type EncodedSnapshot,
  isStepfoldError,
  type Snapshot,
  step,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { orderWorkflow } from './fixtures.js';

// Found by `pnpm fuzz` (stored snapshots): a row torn or edited by hand reached the runner as a
// SyntaxError (text that is not JSON), a TypeError (no workflow hash; parts that contradict each
// other), or as another instance's snapshot (a row naming a different id). Each is INVALID_SNAPSHOT
// now, and the row is left as it was.

/** A store-kit store whose rows the test may overwrite with any text. */
function rawStore() {
  const rows = new Map<string, EncodedSnapshot>();
  const store = defineStore(
    { name: 'raw', isUnavailable: () => false, sizes: { asked: undefined, fallback: 1 << 20 } },
    {
      setup: async () => {},
      insert: async (e) => !rows.has(e.id) && Boolean(rows.set(e.id, e)),
      select: async (id) => rows.get(id)?.json ?? null,
      update: async (e, c) => {
        const row = rows.get(e.id);
        if (!row) return 'missing';
        if (row.version !== c.expected) return { stored: row.version };
        rows.set(e.id, e);
        return 'written';
      },
      version: async (id) => rows.get(id)?.version ?? null,
      due: async () => [],
      page: async () => [],
      remove: async (id) => rows.delete(id),
    },
  );
  return { store, rows };
}

async function withRow(edit: (json: string) => string) {
  const { store, rows } = rawStore();
  const noop = async () => null;
  const runner = createRunner({
    store,
    workflows: [orderWorkflow],
    handlers: { reserveStock: noop, releaseStock: noop, chargeCard: noop, refund: noop, sendEmail: noop },
    execute: false,
  });
  await runner.start('order', 'o-1', { amount: 3 });
  const row = rows.get('o-1')!;
  rows.set('o-1', { ...row, json: edit(row.json) });
  return { runner, store, text: () => rows.get('o-1')!.json };
}

describe('a stored row that is not a snapshot of this instance', () => {
  const cases: Array<[string, (json: string) => string]> = [
    ['torn text', (j) => j.slice(0, 40)],
    ['not JSON at all', () => 'not json'],
    ['another instance', (j) => j.replace('"id":"o-1"', '"id":"o-2"')],
    ['no workflow hash', (j) => j.replace(/"hash":"[0-9a-f]+"/, '"hash":7')],
    ['a number', () => '1e308'],
    [
      'data nested 20 000 deep',
      (j) => j.replace('"input":{', `"input":{"deep":${'['.repeat(20_000)}${']'.repeat(20_000)},`),
    ],
  ];
  for (const [what, edit] of cases) {
    it(`${what}: get and cancel are INVALID_SNAPSHOT and the row stays as it was`, async () => {
      const { runner, text } = await withRow(edit);
      const before = text();
      if (!what.startsWith('data'))
        await expect(runner.get('o-1')).rejects.toMatchObject({ code: 'INVALID_SNAPSHOT' });
      await expect(runner.cancel('o-1')).rejects.toMatchObject({ code: 'INVALID_SNAPSHOT' });
      expect(text()).toBe(before);
    });
  }
});

describe('a loaded snapshot whose parts contradict each other', () => {
  it('a task of a step with no state is INVALID_SNAPSHOT, not a TypeError', () => {
    const s = step(orderWorkflow, null, { type: 'start', at: 1, id: 'o-1', input: {} });
    const broken = { ...JSON.parse(JSON.stringify(s)), steps: {} } as Snapshot;
    expect(() => step(orderWorkflow, broken, { type: 'tick', at: 10 ** 9 })).toThrow(
      expect.objectContaining({ code: 'INVALID_SNAPSHOT' }),
    );
  });
});

describe('a create asked to take flow work on a store that takes none in a create', () => {
  it('rejects INVALID_OPTIONS and writes no row', async () => {
    const { store, rows } = rawStore();
    const s = step(orderWorkflow, null, { type: 'start', at: 1, id: 'o-9', input: { amount: 3 } });
    const flow = {
      take: { holder: 'o-9#run#1@1', needs: [{ scope: 'order/charge', key: 'k', limit: 1 }], until: 2 },
      now: 1,
      taken: () => {},
    };
    const failed = await store.create(s, { flow }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isStepfoldError(failed, 'INVALID_OPTIONS')).toBe(true);
    expect(rows.size).toBe(0);
  });
});
