import {
  createHarness,
  createMemoryStore,
  type Snapshot,
  searchAttributes,
  workflow,
} from '@stepfold/engine';
import { defineMigration, dryRunMigration, planMigration } from '@stepfold/engine/migrations';
import { describe, expect, it } from 'vitest';

// Changing a workflow's search attributes is a migration: the move brings each instance's values
// under the new declarations, and the dry run says which instances a change would refuse.

type In = { customerId: string; customer?: { id: string }; vip?: boolean };

const v1 = workflow('account', 1)
  .input<In>()
  .task('review', { handler: 'review' })
  .human('approve')
  .search('customerId', { type: 'string', from: 'input.customerId' })
  .search('vip', { type: 'boolean', from: 'input.vip' })
  .search('tier', { type: 'string' })
  .build();

// v2 reads the customer from another path, no longer declares `vip`, and makes `tier` a number.
const v2 = workflow('account', 2)
  .input<In>()
  .task('review', { handler: 'review' })
  .human('approve')
  .search('customerId', { type: 'string', from: 'input.customer.id' })
  .search('tier', { type: 'number' })
  .build();

const toV2 = defineMigration({
  from: v1,
  to: v2,
  data(draft) {
    const input = draft.input as In;
    input.customer = { id: `C-${input.customerId}` };
  },
});

/** An instance of v1 waiting at `approve`, its review having set `tier` (or nothing). */
function waiting(customerId: string, tier?: string): Snapshot {
  const h = createHarness(v1, { id: `acct-${customerId}`, kinds: [searchAttributes] }).start({
    customerId,
    vip: true,
  });
  h.complete('review', null, tier === undefined ? {} : { search: { tier } });
  return h.snapshot;
}

describe('a migration that changes search attributes', () => {
  it('reads path attributes again by the new path and drops what the new version does not declare', () => {
    const s = waiting('42');
    expect(s.search).toEqual({ customerId: '42', vip: true });
    const plan = planMigration(toV2, s, { at: s.updatedAt + 1, kinds: [searchAttributes] });
    expect(plan.ok).toBe(true);
    if (plan.ok) expect(plan.snapshot.search).toEqual({ customerId: 'C-42' });
  });

  it('refuses an instance whose handler-set value no longer fits its type, naming the attribute', () => {
    const s = waiting('7', 'gold');
    const plan = planMigration(toV2, s, { at: s.updatedAt + 1, kinds: [searchAttributes] });
    expect(plan.ok).toBe(false);
    if (!plan.ok)
      expect(plan.reasons.join('\n')).toMatch(
        /search attribute "tier", set by a handler, must be a finite number/,
      );
  });

  it('keeps a handler-set value that still fits', () => {
    const v3 = workflow('account', 3)
      .input<In>()
      .task('review', { handler: 'review' })
      .human('approve')
      .search('tier', { type: 'string' })
      .build();
    const s = waiting('8', 'silver');
    const plan = planMigration(defineMigration({ from: v1, to: v3 }), s, {
      at: s.updatedAt + 1,
      kinds: [searchAttributes],
    });
    expect(plan.ok && plan.snapshot.search).toEqual({ tier: 'silver' });
  });

  it('the dry run counts the refusals and the instances whose attributes change', async () => {
    const store = createMemoryStore();
    await store.create(waiting('1'));
    await store.create(waiting('2'));
    await store.create(waiting('3', 'gold'));
    const report = await dryRunMigration(store, toV2, { at: Date.now(), kinds: [searchAttributes] });
    expect(report.outcomes).toMatchObject({ migratable: 2, refused: 1 });
    expect(report.attributesChanged).toBe(2);
    expect(report.reasons[0]?.samples).toEqual(['acct-3']);
  });
});
