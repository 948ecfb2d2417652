import { expect, it } from 'vitest';
import { sha256Hex } from '../../content-hash.js';
import { StoreUnavailableError } from '../../errors.js';
import type { PayloadStore } from '../../payloads/payload-store.js';
import { eventually } from './context.js';
import type { PayloadOutageControl, PayloadSuiteContext } from './payload-context.js';

/** The server goes away mid-test: typed retryable errors, checks still first, then recovery on the same object. */
export function describePayloadOutage(ctx: PayloadSuiteContext, outage: PayloadOutageControl): void {
  it('a stopped server gives STORE_UNAVAILABLE (bad input still its own error); the same store recovers', async () => {
    const store: PayloadStore = await outage.createStore();
    const before = JSON.stringify({ before: true });
    const during = JSON.stringify({ during: true });
    try {
      await store.setup();
      await store.put('outage', sha256Hex(before), before);
      await outage.stop(store);
      try {
        // Settled together, so no rejection is left unobserved while another is awaited.
        const results = await Promise.allSettled([
          store.setup(),
          store.put('outage', sha256Hex(during), during),
          store.get('outage', sha256Hex(before)),
          store.list('outage', { limit: 10 }),
          store.delete('outage', [sha256Hex(before)]),
          store.deleteOwner('outage'),
        ]);
        for (const result of results) {
          expect(result.status).toBe('rejected');
          const err = (result as PromiseRejectedResult).reason;
          expect(err).toBeInstanceOf(StoreUnavailableError);
          expect(err).toMatchObject({ code: 'STORE_UNAVAILABLE', retryable: true });
        }
        // Checked before any I/O: a bad owner or hash is refused as such, server or not.
        await expect(store.get('bad owner', sha256Hex(before))).rejects.toMatchObject({ code: 'INVALID_ID' });
        await expect(store.put('outage', sha256Hex('1'), '2')).rejects.toMatchObject({
          code: 'INVALID_INPUT',
        });
      } finally {
        await outage.start(store);
      }
      // No new client, no restart of this process: the same object works again.
      await eventually(() => store.setup(), 60_000);
      const kept = await eventually(() => store.get('outage', sha256Hex(before)), 60_000);
      // A server that keeps data has the body; an in-memory one (moto, for DynamoDB) lost it.
      if (kept !== null) expect(kept).toBe(before);
      await store.put('outage', sha256Hex(during), during);
      expect(await store.get('outage', sha256Hex(during))).toBe(during);
    } finally {
      await ctx.options.destroyStore?.(store).catch(() => {});
      await store.close();
    }
  });
}
