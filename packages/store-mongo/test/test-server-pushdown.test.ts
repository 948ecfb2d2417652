// The test server (FerretDB built with scripts/ferretdb/_patch/) turns part of a filter into SQL so
// queries use the collection's indexes: `_id` equality and `$in`, number bounds on top-level
// fields. FerretDB filters every row it reads again, so the SQL may keep too many documents but
// must never drop one the filter matches, or claims and saves here would silently miss instances.
// This checks the server itself against its own unpushed answer: a filter wrapped in `$and` is
// never pushed down (a `$` key), so `{ $and: [F] }` is F as FerretDB's matcher alone answers it.
import fc from 'fast-check';
import { type Document, type Filter, Long } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dueFilter } from '../src/due-claims.js';
import { createMongoStore } from '../src/index.js';
import { requireServer, testClient } from './server.js';

const client = testClient();
const db = client.db('stepfold_test');
const tag = `pushdown_${process.pid}`;
// Filters go to `indexed` (a non-unique index on the bounded field) and `plain` (no index) as they
// are, and to `oracle` wrapped in $and; after every step the three must hold the same documents.
const indexed = db.collection<Document>(`${tag}_indexed`);
const plain = db.collection<Document>(`${tag}_plain`);
const oracle = db.collection<Document>(`${tag}_oracle`);
const ALL = [indexed, plain, oracle];

const IDS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];

// What a field may hold: every BSON type FerretDB 1.x stores that a number bound must sort right
// (or leave to the matcher): int32, int64, double, arrays of them, strings, booleans, null,
// documents, dates, and no field at all. Infinity and NaN cannot be stored.
// Small domains, so a bound often equals a stored value (where an off-by-one would show).
const small = fc.integer({ min: -3, max: 3 });
const finite = fc.oneof(
  fc.constantFrom(-1.5, 0.5, 2, 2.5),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
);
const scalar = fc.oneof(
  { weight: 4, arbitrary: small },
  { weight: 2, arbitrary: finite },
  { weight: 2, arbitrary: small.map((n) => Long.fromNumber(n)) },
  { weight: 1, arbitrary: fc.constantFrom('5', '', 'x', '[1]', 'z') },
  { weight: 1, arbitrary: fc.oneof(fc.boolean(), fc.constant(null)) },
  { weight: 1, arbitrary: fc.constantFrom({ a: 1 }, { n: 3 }) },
  { weight: 1, arbitrary: small.map((n) => new Date(n + 3)) },
);
const value = fc.oneof(
  { weight: 3, arbitrary: scalar },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 3 }) },
);
const doc = fc.record(
  { _id: fc.constantFrom(...IDS), n: value, m: fc.constantFrom('p', 'q') },
  { requiredKeys: ['_id'] },
);

// Bounds: the number kinds (the infinities included) and a few that are not numbers. Not NaN:
// FerretDB 1.x drops the connection on a NaN bound, pushed down or not (`$and` too).
const bound = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -4, max: 4 }) },
  { weight: 2, arbitrary: finite },
  { weight: 1, arbitrary: small.map((n) => Long.fromNumber(n)) },
  { weight: 1, arbitrary: fc.constantFrom(Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY) },
  { weight: 1, arbitrary: fc.constantFrom('5', null, new Date(3)) },
);
// Mostly one bound, so what it keeps is not hidden behind another.
const op = fc.constantFrom('$lt', '$lte', '$gt', '$gte');
const range = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(op, bound).map(([o, b]) => ({ [o]: b })) },
  {
    weight: 1,
    arbitrary: fc
      .record({ $lt: bound, $lte: bound, $gt: bound, $gte: bound, $ne: small }, { requiredKeys: [] })
      .filter((r) => Object.keys(r).length > 0),
  },
);
const idPart = fc.oneof(
  fc.constantFrom(...IDS),
  fc.record({ $in: fc.uniqueArray(fc.constantFrom(...IDS), { maxLength: 4 }) }),
  fc.record({ $in: fc.constant([/^[a-c]/, 'g']) }),
  fc.record({ $in: fc.constant(['a', 1]) }),
);
const sometimes = <T>(a: fc.Arbitrary<T>, present: number, absent: number) =>
  fc.oneof({ weight: present, arbitrary: a }, { weight: absent, arbitrary: fc.constant(undefined) });
const filter: fc.Arbitrary<Filter<Document>> = fc
  .tuple(sometimes(idPart, 1, 2), sometimes(range, 4, 1), sometimes(fc.constantFrom('p', 'q'), 1, 3))
  .map(([_id, n, m]) => {
    const f: Document = {};
    if (_id !== undefined) f['_id'] = _id;
    if (n !== undefined) f['n'] = n;
    if (m !== undefined) f['m'] = m;
    return f;
  });

type Step =
  | { op: 'insert'; doc: Document }
  | { op: 'find' | 'count' | 'delete'; filter: Filter<Document> }
  | { op: 'update'; filter: Filter<Document>; n: unknown };
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant('insert' as const), doc }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('find' as const), filter }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('count' as const), filter }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('update' as const), filter, n: value }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), filter }) },
);

const unpushed = (f: Filter<Document>): Filter<Document> => ({ $and: [f] });
const contents = (c: (typeof ALL)[number]) => c.find({}).sort({ _id: 1 }).toArray();

// Runs one step on the three collections and returns what each answered.
async function run(s: Step): Promise<unknown[]> {
  return Promise.all(
    ALL.map(async (c) => {
      if (s.op === 'insert') {
        await c.deleteOne({ _id: s.doc['_id'] });
        await c.insertOne({ ...s.doc });
        return null;
      }
      const f = c === oracle ? unpushed(s.filter) : s.filter;
      if (s.op === 'update') return (await c.updateMany(f, { $set: { n: s.n } })).modifiedCount;
      if (s.op === 'find') return c.find(f).sort({ _id: 1 }).toArray();
      if (s.op === 'count') return c.countDocuments(f);
      return (await c.deleteMany(f)).deletedCount;
    }),
  );
}

beforeAll(async () => {
  await requireServer(client);
  for (const c of ALL) await c.drop().catch(() => {});
  await indexed.createIndexes([{ key: { n: 1, _id: 1 }, name: 'n_id' }]);
});
afterAll(async () => {
  for (const c of ALL) await c.drop().catch(() => {});
  await client.close();
});

describe('the test server pushes filters down to SQL without losing documents', () => {
  it('finds, counts, updates and deletes exactly what its unpushed matcher does', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 25 }), async (steps) => {
        for (const c of ALL) await c.deleteMany({});
        for (const s of steps) {
          const [a, b, o] = await run(s);
          expect({ step: s, indexed: a }).toEqual({ step: s, indexed: o });
          expect({ step: s, plain: b }).toEqual({ step: s, plain: o });
        }
        const [a, b, o] = await Promise.all(ALL.map(contents));
        expect(a).toEqual(o);
        expect(b).toEqual(o);
      }),
      { numRuns: 100 },
    );
  });

  it("plans the store's hot queries as index searches, not scans", async () => {
    const collection = `${tag}_store`;
    const store = createMongoStore({ db, collection });
    await store.setup();
    const plan = async (filter: Document): Promise<string> => {
      const r = await db.command({ explain: { find: collection, filter }, verbosity: 'queryPlanner' });
      return JSON.stringify(r['queryPlanner']);
    };
    try {
      const hot: Record<string, Document> = {
        'due poll': dueFilter(1000),
        "one workflow's due poll": dueFilter(1000, 'order'),
        'claim of the found ids': dueFilter(1000, undefined, ['i1', 'i2']),
        'save (id and version)': { _id: 'i1', version: 3 },
        'inbox claim': { sentDueAt: { $lte: 1000 } },
        "claim's read-back": { _id: { $in: ['i1', 'i2'] }, claimCall: 'x' },
      };
      for (const [what, filter] of Object.entries(hot)) {
        const p = await plan(filter);
        expect({ what, plan: p }).toEqual({ what, plan: expect.stringContaining('USING INDEX') });
        expect({ what, plan: p }).not.toEqual({ what, plan: expect.stringMatching(/detail=SCAN/) });
      }
    } finally {
      await db.dropCollection(collection).catch(() => {});
    }
  });
});
