import type { Snapshot, Store } from '@stepfold/engine';
import { type Backend, backends, type Connection, serverNote } from '../backends.js';
import { compareAsync } from '../measure.js';
import { snapshotOfAbout } from '../payload.js';
import { type Group, type Row, rateRow } from '../row.js';

// Store overhead: each adapter's conditional save against the raw driver running
// the same single conditional statement with the same payload. Each client is its own driver
// client (own connection) and writes its own instance, so there are no conflicts: N clients
// measure the server's and driver's concurrency, the same for both contenders. Both contenders
// serialize the snapshot on every call (a raw user must too) and check the write matched.
// Contenders alternate sample by sample, so drift on this shared machine hits both alike.

const SNAPSHOT_BYTES = 2048;

/**
 * One instance per client, written alternately by the adapter and by the raw statement: both
 * contenders update the very same documents (servers are not equally fast on every row).
 */
interface Writer {
  viaStore(): Promise<void>;
  viaRaw(): Promise<void>;
}

function writers(conns: Connection[], base: Snapshot, prefix: string): Promise<Writer[]> {
  return Promise.all(
    conns.map(async (c, w) => {
      const id = `${prefix}-${w}`;
      await c.store.delete(id);
      let current: Snapshot = { ...base, id, version: 1 };
      await c.store.create(current);
      const next = (): Snapshot => ({
        ...current,
        version: current.version + 1,
        updatedAt: current.updatedAt + 1,
      });
      return {
        async viaStore() {
          const n = next();
          await c.store.save(n, current.version);
          current = n;
        },
        async viaRaw() {
          const n = next();
          await c.raw(n, current.version);
          current = n;
        },
      };
    }),
  );
}

async function compare(b: Backend, clients: number): Promise<Row> {
  const conns = await Promise.all(Array.from({ length: clients }, () => b.connect()));
  try {
    await conns[0]!.store.setup();
    const base = snapshotOfAbout(SNAPSHOT_BYTES);
    const prefix = `bench-save-${process.pid}-${clients}`;
    const ws = await writers(conns, base, prefix);
    // Server warm-up (moto loads its DynamoDB code on the first request) before any sample.
    const until = performance.now() + b.warmupMs;
    while (performance.now() < until) await Promise.all(ws.map((x) => x.viaStore().then(() => x.viaRaw())));
    const [a, r] = await compareAsync(
      (_, w) => ws[w]!.viaStore(),
      (_, w) => ws[w]!.viaRaw(),
      { concurrency: clients, warmupMs: 300, sampleMs: 500, samples: 12 },
    );
    await cleanup(conns[0]!.store, prefix, clients);
    return rateRow(
      `store-${b.name}-${clients === 1 ? '1-client' : `${clients}-clients`}`,
      a.hz,
      r.hz,
      'saves/s',
      0.9,
      {
        note: `${serverNote(b)}, ${clients} client${clients > 1 ? 's' : ''}, ${SNAPSHOT_BYTES} B snapshot; raw: ${b.statement}`,
        details: { oursSamples: a.samples.map(Math.round), rawSamples: r.samples.map(Math.round) },
      },
    );
  } finally {
    await Promise.all(conns.map((c) => c.close()));
  }
}

async function cleanup(store: Store, prefix: string, clients: number): Promise<void> {
  for (let w = 0; w < clients; w++) await store.delete(`${prefix}-${w}`);
}

function storeGroup(b: Backend): Group {
  return {
    name: `store-${b.name}`,
    async run() {
      const down = await b.unavailable();
      if (down) {
        return [1, 4].map((n) => ({
          ...rateRow(`store-${b.name}-${n === 1 ? '1-client' : `${n}-clients`}`, null, null, 'saves/s', 0.9),
          note: `not measured: ${down}`,
        }));
      }
      return [await compare(b, 1), await compare(b, 4)];
    },
  };
}

export const storeGroups: Group[] = backends.map(storeGroup);
