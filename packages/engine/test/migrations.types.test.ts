import {
  createMemoryStore,
  createRunner,
  defineWorkflow,
  type,
  type VersionOf,
  workflow,
} from '@stepfold/engine';
import { defineMigration, migrate, migrateAll } from '@stepfold/engine/migrations';
import { describe, expect, expectTypeOf, it } from 'vitest';

// Migrations, checked by the compiler where the types see the definitions: the recipe's outputs
// by the new step ids, one workflow's versions, in order, and a runner that registers the target.
// Each expected-error line is a mistake the compiler must see; these functions are never called.

const v1 = workflow('pay', 1).input(type<{ sku: string }>()).task('charge', { handler: 'charge' }).build();
const v2 = workflow('pay', 2)
  .input(type<{ sku: string }>())
  .task('charge', { handler: 'charge' })
  .task('bill', { handler: 'bill' })
  .build();
const other = workflow('refund', 2).task('charge', { handler: 'charge' }).build();
const handlers = { charge: () => 1, bill: () => 2 };

describe('defineMigration', () => {
  it("keys the recipe's draft.outputs by the new definition's step ids", () => {
    const typeOnly = () =>
      defineMigration({
        from: v1,
        to: v2,
        data(draft) {
          draft.outputs.bill = { made: 'up' };
          // @ts-expect-error "bil" is not a step of pay v2
          draft.outputs.bil = { made: 'up' };
        },
      });
    expect(typeof typeOnly).toBe('function');
  });

  it('refuses from and to of different workflows', () => {
    const typeOnly = () => {
      // @ts-expect-error refund is another workflow than pay
      defineMigration({ from: v1, to: other });
    };
    expect(typeof typeOnly).toBe('function');
  });

  it("refuses a to.version not above from's for the builder's definitions (their versions are literal types)", () => {
    const typeOnly = () => {
      defineMigration({ from: v1, to: v2 });
      // @ts-expect-error v1 is not above v2
      defineMigration({ from: v2, to: v1 });
      // @ts-expect-error nor is v2 above itself
      defineMigration({ from: v2, to: v2 });
      // A version the types do not see (a number variable): refused at run time only.
      const version: number = 1;
      const loose = workflow('pay', version).task('charge', { handler: 'charge' }).build();
      defineMigration({ from: v2, to: loose });
    };
    expect(typeof typeOnly).toBe('function');
    expectTypeOf<VersionOf<typeof v2>>().toEqualTypeOf<2>();
    expectTypeOf<VersionOf<ReturnType<typeof defineWorkflow>>>().toEqualTypeOf<number>();
  });

  it("refuses a to.version not above from's where the versions are literal types", () => {
    const a = { name: 'flow', version: 3, start: 's', steps: { s: { kind: 'task', handler: 'h' } } } as const;
    const b = { ...a, version: 12 } as const;
    const c = { ...a, version: 2 } as const;
    const typeOnly = () => {
      defineMigration({ from: a, to: b });
      // @ts-expect-error v2 is not above v3
      defineMigration({ from: a, to: c });
      // @ts-expect-error nor is v3 above itself
      defineMigration({ from: a, to: a });
      // JSON definitions (version: number): refused at run time only (INVALID_MIGRATION).
      const j = defineWorkflow(a);
      defineMigration({ from: j, to: j });
    };
    expect(typeof typeOnly).toBe('function');
  });
});

describe('migrate', () => {
  it("refuses a runner that does not register the migration's target", () => {
    const typeOnly = async () => {
      const toV2 = defineMigration({ from: v1, to: v2 });
      const store = createMemoryStore();
      const both = createRunner({ store, workflows: [v1, v2], handlers });
      await migrate(both, toV2, 'p-1');
      await migrateAll(both, toV2);
      const onlyV1 = createRunner({ store, workflows: [v1], handlers });
      // @ts-expect-error the runner lacks pay v2
      await migrate(onlyV1, toV2, 'p-1');
      // @ts-expect-error the runner lacks pay v2
      await migrateAll(onlyV1, toV2);
    };
    expect(typeof typeOnly).toBe('function');
  });
});
