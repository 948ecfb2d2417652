import { createRunner, isStepfoldError, type Store, type, workflow } from '@stepfold/engine';
import {
  checkMigration,
  defineMigration,
  dryRunMigration,
  type MigrationRefusedError,
  migrate,
  migrateAll,
} from '@stepfold/engine/migrations';
import { describe, expect, it } from 'vitest';

// Version 1 instances waiting in the human step `approve` move to version 2, where
// the step is `review` (same decision signal) followed by a new `notify` step, and the input
// gains a `currency` the data recipe fills. They finish on version 2. An instance that timed out
// into `legacy`, a step version 2 removed, is refused and left exactly as stored. Run on the
// memory store (migrate-waiting-instances.test.ts) and on PostgreSQL (store-postgres's).

const DAY = 86_400_000;

const v1 = workflow('order', 1)
  .input(type<{ sku: string }>())
  .task('reserve', { handler: 'reserve' })
  .human('approve', { timeoutMs: DAY, onTimeout: 'legacy' })
  .task('ship', { handler: 'ship', end: true })
  .wait('legacy', { signal: 'manual' })
  .build();

const v2 = workflow('order', 2)
  .input(type<{ sku: string; currency: string }>())
  .task('reserve', { handler: 'reserve' })
  .human('review', { signal: 'approve', timeoutMs: DAY, onTimeout: 'expired' })
  .task('notify', { handler: 'notify' })
  .task('ship', { handler: 'ship', end: true })
  .task('expired', { handler: 'expire' })
  .build();

const toV2 = defineMigration({
  from: v1,
  to: v2,
  steps: { approve: 'review', legacy: null },
  data(draft) {
    draft.input.currency ??= 'EUR';
  },
});

async function setup(fresh: () => Promise<Store>) {
  let now = 1_000;
  const store = await fresh();
  const notified: unknown[] = [];
  const runner = createRunner({
    store,
    workflows: [v1, v2],
    handlers: {
      reserve: ({ input }) => ({ reservation: `R-${(input as { sku: string }).sku}` }),
      ship: () => ({ shipped: true }),
      notify: ({ input }) => {
        notified.push(input);
        return { currency: (input as { currency: string }).currency };
      },
      expire: () => null,
    },
    clock: () => now,
  });
  return { store, runner, notified, advance: (ms: number) => (now += ms) };
}

/** Three orders waiting in `approve`, one that timed out into `legacy`. */
async function seed(t: Awaited<ReturnType<typeof setup>>) {
  await t.runner.start('order', 'order-legacy', { sku: 'OLD' }, { version: 1 });
  t.advance(DAY + 1);
  await t.runner.tick('order-legacy');
  const waiting = ['order-1', 'order-2', 'order-3'];
  for (const id of waiting) await t.runner.start('order', id, { sku: id }, { version: 1 });
  return waiting;
}

/**
 * The scenario's tests, titled `title`, each on a fresh store from `fresh` (the memory store's
 * file and each store package's run the same ones).
 */
export function describeMigratingWaiting(title: string, fresh: () => Promise<Store>): void {
  describe(title, () => {
    it('moves instances waiting in a renamed step; they finish on v2; one in a removed step is refused, untouched', async () => {
      const t = await setup(fresh);
      const waiting = await seed(t);
      for (const id of waiting) expect((await t.store.load(id))?.active).toEqual(['approve']);
      expect((await t.store.load('order-legacy'))?.active).toEqual(['legacy']);

      for (const id of waiting) {
        const moved = await migrate(t.runner, toV2, id);
        expect(moved.workflow.version).toBe(2);
        expect(moved.active).toEqual(['review']);
        expect(moved.log.at(-1)).toMatchObject({ type: 'migrated', detail: 'v1 → v2' });
      }

      const before = JSON.stringify(await t.store.load('order-legacy'));
      const refused = await migrate(t.runner, toV2, 'order-legacy').catch((e: unknown) => e);
      expect(isStepfoldError(refused, 'MIGRATION_REFUSED')).toBe(true);
      expect((refused as MigrationRefusedError).reasons).toEqual([
        'step "legacy" (active) has no place in v2',
      ]);
      expect(JSON.stringify(await t.store.load('order-legacy'))).toBe(before);

      for (const id of waiting) {
        const done = await t.runner.signal(id, 'approve', { decision: 'approve' });
        expect(done.status).toBe('completed');
        expect(done.workflow.version).toBe(2);
        expect(done.steps.review?.output).toEqual({ decision: 'approve' });
        expect(done.steps.notify?.output).toEqual({ currency: 'EUR' });
        expect(done.steps.approve).toBeUndefined();
        expect(done.steps.reserve?.output).toEqual({ reservation: `R-${id}` });
      }
      expect(t.notified).toHaveLength(3);
    });

    it('the dry run reports what would move and why the rest would not, writing nothing', async () => {
      const t = await setup(fresh);
      await seed(t);
      const before = JSON.stringify((await t.store.list({ limit: 100 })).items);
      const pages: number[] = [];
      const report = await dryRunMigration(t.store, toV2, {
        pageSize: 2,
        onProgress: (p) => pages.push(p.read),
      });
      expect(report.total).toBe(4);
      expect(report.outcomes).toEqual({ migratable: 3, refused: 1, finished: 0, otherVersion: 0 });
      expect(report.reasons).toEqual([
        { reason: 'step "legacy" (active) has no place in v2', count: 1, samples: ['order-legacy'] },
      ]);
      expect(report.largest?.bytes).toBeGreaterThan(0);
      expect(pages).toEqual([2, 4]);
      expect(JSON.stringify((await t.store.list({ limit: 100 })).items)).toBe(before);
    });

    it('migrateAll moves what can move and counts the rest; the static check names the same reason', async () => {
      const t = await setup(fresh);
      await seed(t);
      await t.runner.signal('order-3', 'approve', { decision: 'approve' }); // finished on v1
      const report = await migrateAll(t.runner, toV2);
      expect(report.outcomes).toEqual({
        migrated: 2,
        refused: 1,
        conflicted: 0,
        finished: 1,
        otherVersion: 0,
      });
      expect(report.reasons.map((r) => r.reason)).toEqual(['step "legacy" (active) has no place in v2']);

      const check = checkMigration(toV2);
      expect(check.ok).toBe(false);
      expect(check.steps.find((s) => s.step === 'legacy')?.active).toEqual([
        'step "legacy" (active) has no place in v2',
      ]);
      expect(check.steps.find((s) => s.step === 'approve')).toMatchObject({ to: 'review', active: [] });
      expect(check.added).toEqual(['notify', 'expired']);
    });
  });
}
