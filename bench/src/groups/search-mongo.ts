import { isDeepStrictEqual } from 'node:util';
import { createMongoStore, type InstanceDocument } from '@stepfold/store-mongo';
import { type Db, MongoClient } from 'mongodb';
import { BENCH_DB, backends, serverNote } from '../backends.js';
import { snapshotOfAbout } from '../payload.js';
import type { Group, Row } from '../row.js';
import { serviceUrls } from '../services.js';
import {
  largeRows,
  progressLog,
  type SearchSide,
  searchInstance,
  searchRows,
  searchSides,
  sizesOf,
  unmeasured,
} from './search-rows.js';

// The search rows of the MongoDB store: `search-mongo` and `-range`, the PostgreSQL rows' queries
// on two collections of ~1 KB instances a hundredfold apart, 10,000 and 100. The first hundred of
// each are created through `store.create`; the rest are inserted in batches as copies of the
// documents the store wrote (the same fields, `sa` entries encoded as the store encodes them,
// which the load checks against those hundred first). One client per collection, measured
// alternately (ABBA), six rounds. On MongoDB an equality is an exact `sa` entry its multikey index
// finds, and a range is applied in the process over every document's entries (see the store's
// README), so only the equality can keep its ratio. Our test server, FerretDB on SQLite, searches
// an index only for `_id` and number bounds (its patch), so it reads every document for either
// query: a query takes seconds at 10,000 documents, and 100,000 would take minutes a round.

const SNAPSHOT_BYTES = 1024;
/** `STEPFOLD_SEARCH_ROWS` may shrink it, never grow it (a query reads every document here). */
const LARGE = Math.min(largeRows(10_000), 10_000);
const SMALL = 100;
/** Instances of each collection created through the store (the rest are copies of their shape). */
const THROUGH_STORE = 100;
const BATCH = 5000;
const SAMPLES = 6;

const collectionOf = (name: SearchSide['name']) => `stepfold_search_${name}`;

/** A number as the 16 hex digits of its float64 with the order of numbers (the store's `sa` encoding). */
function sortableNumber(n: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, n === 0 ? 0 : n);
  let hi = view.getUint32(0);
  let lo = view.getUint32(4);
  if (hi & 0x8000_0000) {
    hi = ~hi >>> 0;
    lo = ~lo >>> 0;
  } else hi = (hi | 0x8000_0000) >>> 0;
  return hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');
}

/** The document the store writes for a created instance (no wake, no claim, no inbox). */
function documentOf(s: ReturnType<typeof searchInstance>): InstanceDocument {
  const search = s.search as { customerId: string; total: number };
  return {
    _id: s.id,
    version: s.version,
    status: s.status,
    workflow: s.workflow.name,
    definition: `${s.workflow.name}@${s.workflow.version}@${s.workflow.hash}`,
    wakeAt: null,
    dueAt: null,
    snapshot: JSON.stringify(s),
    sa: [`customerId\u00012${search.customerId}`, `total\u00011${sortableNumber(search.total)}`],
  };
}

async function load(db: Db, side: SearchSide, log: (s: string) => void): Promise<void> {
  const name = collectionOf(side.name);
  const store = createMongoStore({ db, collection: name });
  await store.setup();
  const base = snapshotOfAbout(SNAPSHOT_BYTES);
  const coll = db.collection<InstanceDocument>(name);
  for (let g = 0; g < THROUGH_STORE; g++) await store.create(searchInstance(base, g, side.rows));
  for (const written of await coll.find({}).toArray()) {
    const g = Number(written._id.slice(2));
    const ours = documentOf(searchInstance(base, g, side.rows));
    // The snapshot text is compared parsed: the store may write its keys in another order.
    const same = isDeepStrictEqual(
      { ...written, snapshot: JSON.parse(written.snapshot) },
      { ...ours, snapshot: JSON.parse(ours.snapshot) },
    );
    if (!same) throw new Error(`${name}: the bulk document of ${written._id} is not what the store writes`);
  }
  for (let from = THROUGH_STORE; from < side.rows; from += BATCH) {
    const to = Math.min(side.rows, from + BATCH);
    const docs = Array.from({ length: to - from }, (_, j) =>
      documentOf(searchInstance(base, from + j, side.rows)),
    );
    await coll.insertMany(docs, { ordered: false });
    if (to === side.rows)
      log(`${side.name}: ${to.toLocaleString('en-US')} / ${side.rows.toLocaleString('en-US')} documents`);
  }
}

async function run(url: string): Promise<Row[]> {
  const log = progressLog('search-mongo');
  const clients: MongoClient[] = [];
  const open = async () => {
    const c = new MongoClient(url, { maxPoolSize: 1, serverSelectionTimeoutMS: 5000 });
    clients.push(c);
    await c.connect();
    return c.db(BENCH_DB);
  };
  const admin = await open();
  try {
    process.stdout.write('\n');
    for (const name of ['small', 'large'] as const)
      await admin
        .collection(collectionOf(name))
        .drop()
        .catch(() => {});
    const sides = await searchSides({ small: SMALL, large: LARGE }, async (name) =>
      createMongoStore({ db: await open(), collection: collectionOf(name) }),
    );
    for (const side of sides) await load(admin, side, log);
    const mongo = backends.find((b) => b.name === 'mongo')!;
    return await searchRows({
      name: 'search-mongo',
      large: sides[1]!,
      small: sides[0]!,
      sizes: `${sizesOf(LARGE, SMALL)} of ~1 KB (a hundredfold apart, as the other stores' rows), one client each, ${SAMPLES} alternating rounds; the test server reads every document for an \`sa\` condition (its patch searches indexes for \`_id\` and number bounds only), so a query takes seconds at this size: ${serverNote(mongo)}`,
      rangeNote:
        'the store applies a range in the process over every document’s entries, on MongoDB too (its README says why)',
      details: { largeRows: LARGE, smallRows: SMALL },
      log,
      // A query on the large collection takes seconds: one per sample window, fewer rounds.
      sampleMs: 300,
      samples: SAMPLES,
    });
  } finally {
    for (const name of ['small', 'large'] as const) {
      for (const suffix of ['', '_flow', '_stream'])
        await admin
          .collection(`${collectionOf(name)}${suffix}`)
          .drop()
          .catch(() => {});
    }
    for (const c of clients) await c.close().catch(() => {});
  }
}

/** The MongoDB store's search rows (FerretDB here): `list` with `where` at 10,000 instances against 100. */
export const searchMongo: Group = {
  name: 'search-mongo',
  async run() {
    const mongo = backends.find((b) => b.name === 'mongo')!;
    const down = await mongo.unavailable();
    if (down) return unmeasured('search-mongo', `not measured: ${down}`);
    return run(serviceUrls().mongo);
  },
};
