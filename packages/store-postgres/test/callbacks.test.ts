import { callbackTokens, createRunner, workflow } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { useTestTables } from './test-tables.js';

// Callback tokens on PostgreSQL: several presentations of one token at once (racing conditional
// writes from separate runners) apply its decision once; the others are refused, nothing written.

const { store: freshStore } = useTestTables('cb');
const expense = workflow('expense', 1)
  .task('mail', { handler: 'mail' })
  .human('manager', { timeoutMs: 3_600_000 })
  .task('pay', { handler: 'pay' })
  .build();

describe('postgres callback tokens', () => {
  it('five runners presenting one token at once apply the decision once', async () => {
    const store = await freshStore();
    const callbacks = callbackTokens({ keys: { k1: 'a-test-secret-of-at-least-32-bytes!!' } });
    const outbox: string[] = [];
    let paid = 0;
    const runner = () =>
      createRunner({
        store,
        workflows: [expense],
        callbacks,
        handlers: {
          mail: async (ctx) => {
            outbox.push(await ctx.callback('manager'));
            return null;
          },
          pay: () => {
            paid++;
            return null;
          },
        },
      });
    await runner().start('expense', 'pg-cb-1');
    const token = outbox[0]!;
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => runner().callback(token, { decision: 'approve' })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results.filter((r) => r.status === 'rejected'))
      expect((r as PromiseRejectedResult).reason.code).toBe('STEP_NOT_WAITING');
    const s = await store.load('pg-cb-1');
    expect(s?.status).toBe('completed');
    expect(paid).toBe(1);
  });
});
