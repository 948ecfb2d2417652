import { afterAll, describe, expect, it } from 'vitest';
import type { Store } from '../../store/store.js';
import { describeClaims } from './claims.js';
import { describeComposition } from './composition.js';
import { describeConditionalDelete } from './conditional-delete.js';
import type { StoreConformanceOptions, SuiteContext } from './context.js';
import { describeCrud } from './crud.js';
import { describeDueLanes } from './due-lanes.js';
import { describeFairness } from './fairness.js';
import { describeFlow } from './flow.js';
import { describeInbox } from './inbox.js';
import { describeLimits } from './limits.js';
import { describeListing } from './listing.js';
import { describeOutage } from './outage.js';
import { describePriority } from './priority.js';
import { describeRace } from './race.js';
import { describeRunners } from './runners.js';
import { describeSearch } from './search.js';
import { describeStream } from './stream.js';
import { describeUnreadable } from './unreadable.js';
import { describeWakes } from './wakes.js';

/**
 * Registers the store conformance suite with vitest: every adapter runs it against its
 * real server. Call it at the top level of a test file.
 *
 * @example
 * runStoreConformance({
 *   name: 'postgres',
 *   createStore: () => createPostgresStore({ pool, table: `t_${randomUUID().slice(0, 8)}` }),
 *   destroyStore: (store) => dropTable(store),
 *   capabilities: ['claims', 'inbox', 'wakes', 'flow', 'stream'],
 * });
 */
export function runStoreConformance(options: StoreConformanceOptions): void {
  describe(`store conformance: ${options.name}`, () => {
    const opened: Store[] = [];
    const twins: Store[] = [];
    const ctx: SuiteContext = {
      options,
      async fresh() {
        const store = await options.createStore();
        opened.push(store);
        await store.setup();
        return store;
      },
      async twin(store) {
        if (!options.reopen) return store;
        const twin = await options.reopen(store);
        twins.push(twin);
        await twin.setup();
        return twin;
      },
    };
    afterAll(async () => {
      for (const twin of twins) await twin.close();
      for (const store of opened) {
        await options.destroyStore?.(store);
        await store.close();
      }
    });
    const has = new Set(options.capabilities);
    it('has exactly the capabilities it claims', async () => {
      const store = await ctx.fresh();
      const found = (['claims', 'flow', 'inbox', 'stream', 'wakes'] as const).filter(
        (c) => store[c] !== undefined,
      );
      expect(found).toEqual([...has].sort());
    });
    describe('core: create, load, save, delete', () => describeCrud(ctx));
    describe('core: conditional delete', () => describeConditionalDelete(ctx));
    describe('core: concurrent writers', () => describeRace(ctx));
    describe('core: listDue and list', () => describeListing(ctx));
    describe('core: due lanes', () => describeDueLanes(ctx));
    describe('search: list by attributes', () => describeSearch(ctx));
    if (options.fairness !== false) describe('core: fair due order across keys', () => describeFairness(ctx));
    if (options.priority !== false) describe('core: due order by priority', () => describePriority(ctx));
    describe('core: limits and hostile input', () => describeLimits(ctx));
    describe('core: two runners on this store', () => describeRunners(ctx));
    if (has.has('claims')) describe('claims', () => describeClaims(ctx));
    if (has.has('inbox')) describe('inbox: runner.send', () => describeInbox(ctx));
    if (has.has('wakes')) describe('wakes', () => describeWakes(ctx));
    if (has.has('flow')) describe('flow: slots and rate windows per key', () => describeFlow(ctx));
    if (has.has('stream')) describe('stream: chunks per step attempt', () => describeStream(ctx));
    describe('composition: child workflows and maps', () => describeComposition(ctx));
    const { outage, corrupt } = options;
    if (corrupt) describe('rows that cannot be read', () => describeUnreadable(ctx, corrupt));
    if (outage) describe('server outage', () => describeOutage(ctx, outage));
  });
}
