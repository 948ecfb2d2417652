import { expect, it } from 'vitest';
import { StoreUnavailableError } from '../../errors.js';
import type { Store } from '../../store/store.js';
import { makeTestSnapshot } from '../test-snapshot.js';
import { eventually, type OutageControl, type SuiteContext } from './context.js';

/** The server goes away mid-test: typed retryable errors, then recovery on the same store object. */
export function describeOutage(ctx: SuiteContext, outage: OutageControl): void {
  it('a stopped server gives STORE_UNAVAILABLE; the same store recovers once it is back', async () => {
    const store: Store = await outage.createStore();
    try {
      await store.setup();
      const before = makeTestSnapshot('outage-before', { wakeAt: 1 });
      await store.create(before);
      await outage.stop(store);
      try {
        // Settled together, so no rejection is left unobserved while another is awaited.
        const results = await Promise.allSettled([
          store.load('outage-before'),
          store.save(makeTestSnapshot('outage-before', { version: 2 }), 1),
          store.create(makeTestSnapshot('outage-during')),
          store.listDue(10, 10),
          store.list({ limit: 10 }),
          store.delete('outage-before'),
          ...(store.flow
            ? [
                store.flow.acquire('outage-h', 'outage-before', [{ scope: 'o', key: '', limit: 1 }], 10, 20),
                store.flow.release(['outage-h'], 10),
                store.flow.renew(['outage-h'], 20),
                store.flow.list({ limit: 10, now: 10 }),
              ]
            : []),
        ]);
        for (const result of results) {
          expect(result.status).toBe('rejected');
          const err = (result as PromiseRejectedResult).reason;
          expect(err).toBeInstanceOf(StoreUnavailableError);
          expect(err).toMatchObject({ code: 'STORE_UNAVAILABLE', retryable: true });
        }
      } finally {
        await outage.start(store);
      }
      // No new client, no restart of this process: the same object works again.
      await eventually(() => store.setup(), 60_000);
      const kept = await eventually(() => store.load('outage-before'), 60_000);
      // A server that keeps data has the row untouched; an in-memory one (moto, for DynamoDB) lost it.
      if (kept !== null) expect(kept).toEqual(before);
      await store.create(makeTestSnapshot('outage-after', { input: 'back' }));
      expect((await store.load('outage-after'))?.input).toBe('back');
      expect(await store.load('outage-during')).toBeNull();
    } finally {
      await ctx.options.destroyStore?.(store).catch(() => {});
      await store.close();
    }
  });
}
