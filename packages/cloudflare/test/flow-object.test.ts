/**
 * The flow object in workerd (through Miniflare): its SQLite, called from Node through the
 * namespace as a workflow object calls it, by `createDurableFlowStore`. The engine's conformance
 * suite runs its flow part on it (the rest of the suite runs on an in-memory store beside it: the
 * flow object holds counters, not instances).
 */
import { fileURLToPath } from 'node:url';
import { createMemoryStore, type Store } from '@stepfold/engine';
import { runStoreConformance } from '@stepfold/engine/conformance';
import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll } from 'vitest';
import { createDurableFlowStore } from '../src/flow-object.js';
import type { DurableNamespace } from '../src/platform.js';
import { bundleWorker, startWorker } from './workerd-harness.js';

const root = fileURLToPath(new URL('..', import.meta.url));
let mf: Miniflare;
let namespace: DurableNamespace;
let objects = 0;
const names = new Map<Store, string>();

beforeAll(async () => {
  const bundle = await bundleWorker(
    `${root}test/fixtures/flow-worker.ts`,
    `${root}test/dist/flow-worker.js`,
    {
      alias: { '@stepfold/cloudflare': `${root}src/index.ts` },
    },
  );
  mf = await startWorker(bundle, {
    name: 'flow',
    main: 'flow-worker.ts',
    compatibilityDate: '2026-04-20',
    durableObjects: { FLOW: { className: 'FlowCounts', useSQLite: true } },
  });
  const real = await mf.getDurableObjectNamespace('FLOW');
  // Miniflare's stubs take a URL and init (its own Request class, not Node's): pass the parts.
  // Each `get` makes its Miniflare stub once, as a worker's binding would: a stub made per request
  // is a synchronous call into Miniflare's proxy each time, and in a loaded full-suite run one of
  // those failed the proxy's own message check, which broke every call after it.
  namespace = {
    idFromName: (name) => real.idFromName(name),
    get: (id) => {
      let made: ReturnType<typeof real.get> | undefined;
      return {
        fetch: async (request) => {
          made ??= real.get(id as ReturnType<typeof real.idFromName>);
          const stub = made;
          const res = await stub.fetch(request.url, { method: request.method, body: await request.text() });
          return new Response(await res.text(), {
            status: res.status,
            headers: { 'content-type': 'application/json' },
          });
        },
      };
    },
  };
});
afterAll(async () => {
  await mf?.dispose();
});

/** An in-memory store for the instances, without its own capabilities, and `flow` from a flow object. */
function withFlow(base: Store, name: string): Store {
  const { claims: _c, inbox: _i, wakes: _w, flow: _f, stream: _s, ...rest } = base;
  const store = { ...rest, flow: createDurableFlowStore(namespace, { name }) };
  names.set(store, name);
  return store;
}

runStoreConformance({
  name: 'cloudflare flow object',
  capabilities: ['flow'],
  // The due order is the memory store's (its own suite covers it); with `claims` hidden here, a
  // listDue's claims cannot be given back between the fairness part's looks.
  fairness: false,
  // The instances are the memory store's, the counters the flow object's: a delete here releases
  // in the memory store's own counts (the Durable Object store's delete is tested in storage-ops).
  deleteReleasesFlow: false,
  // A flow object of its own per store: nothing shared between tests.
  createStore: () => withFlow(createMemoryStore(), `flow-${++objects}`),
  // The flow races: a second client of the same flow object (another stub, as another worker's).
  reopen: (store) => withFlow(store, names.get(store)!),
});
