import { afterAll, describe } from 'vitest';
import type { PayloadStore } from '../../payloads/payload-store.js';
import { describePayloadBasics } from './payload-basics.js';
import { describePayloadCollection } from './payload-collection.js';
import type { PayloadStoreConformanceOptions, PayloadSuiteContext } from './payload-context.js';
import { describePayloadOutage } from './payload-outage.js';

/**
 * Registers the payload store conformance suite with vitest: every payload store adapter runs it
 * against its real server. Call it at the top level of a test file.
 *
 * @example
 * runPayloadStoreConformance({
 *   name: 'postgres',
 *   createStore: () => createPostgresPayloadStore({ pool, table: `p_${randomUUID().slice(0, 8)}` }),
 *   destroyStore: (store) => dropTable(store),
 * });
 */
export function runPayloadStoreConformance(options: PayloadStoreConformanceOptions): void {
  describe(`payload store conformance: ${options.name}`, () => {
    const opened: PayloadStore[] = [];
    const ctx: PayloadSuiteContext = {
      options,
      async fresh() {
        const store = await options.createStore();
        opened.push(store);
        await store.setup();
        return store;
      },
    };
    afterAll(async () => {
      for (const store of opened) {
        await options.destroyStore?.(store);
        await store.close();
      }
    });
    describe('round trips, limits and hostile input', () => describePayloadBasics(ctx));
    describe('listing, deleting and collecting', () => describePayloadCollection(ctx));
    const { outage } = options;
    if (outage) describe('server outage', () => describePayloadOutage(ctx, outage));
  });
}
