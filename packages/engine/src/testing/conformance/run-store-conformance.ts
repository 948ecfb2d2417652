import { afterAll, describe } from 'vitest';
import type { Store } from '../../store/store.js';
import type { StoreConformanceOptions, SuiteContext } from './context.js';
import { describeCrud } from './crud.js';
import { describeDueLanes } from './due-lanes.js';
import { describeLimits } from './limits.js';
import { describeListing } from './listing.js';
import { describeOutage } from './outage.js';
import { describeRace } from './race.js';
import { describeRunners } from './runners.js';
import { describeSent } from './sent.js';

/**
 * Registers the store conformance suite with vitest: every adapter runs it against its
 * real server. Call it at the top level of a test file.
 *
 * @example
 * runStoreConformance({
 *   name: 'postgres',
 *   createStore: () => createPostgresStore({ pool, table: `t_${randomUUID().slice(0, 8)}` }),
 *   destroyStore: (store) => dropTable(store),
 *   claimsDue: true,
 * });
 */
export function runStoreConformance(options: StoreConformanceOptions): void {
  describe(`store conformance: ${options.name}`, () => {
    const opened: Store[] = [];
    const ctx: SuiteContext = {
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
    describe('create, load, save, delete', () => describeCrud(ctx));
    describe('concurrent writers', () => describeRace(ctx));
    describe('listDue and list', () => describeListing(ctx));
    describe('due lanes, claims and wakes', () => describeDueLanes(ctx));
    describe('limits and hostile input', () => describeLimits(ctx));
    describe('two runners on this store', () => describeRunners(ctx));
    if (options.sent) describe('runner.send and the inbox', () => describeSent(ctx));
    const { outage } = options;
    if (outage) describe('server outage', () => describeOutage(ctx, outage));
  });
}
