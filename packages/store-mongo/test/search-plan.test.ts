// What `list({ where: { customerId } })` costs on the MongoDB store: the find it sends, explained
// by the server. On MongoDB the multikey index `stepfold_search` serves it: the keys and documents
// examined are the matches (and the one past the page). Our test server, FerretDB 1.x on SQLite,
// cannot serve an equality on `sa` (or on any string field) from an index, even with the pushdown
// of scripts/ferretdb/_patch/: its plan is a scan of the collection, filtered by FerretDB's matcher
// (see "Search attributes" in the README). The test pins that plan, so a server that starts using
// an index for it fails here and the README's account gets updated.
import { makeTestSnapshot, type Snapshot } from '@stepfold/engine';
import { type CommandStartedEvent, type Document, MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMongoStore } from '../src/index.js';
import { MONGO_URL, requireServer } from './server.js';

/** Instances stored: small, since the test server runs one command at a time for every test file. */
const INSTANCES = 1000;
/** Instances of each customer. */
const PER_CUSTOMER = 10;
const CUSTOMERS = INSTANCES / PER_CUSTOMER;
/** Creates in flight while loading. */
const IN_FLIGHT = 50;

// testClient's options, and the driver's command events (the finds the store sends).
const client = new MongoClient(MONGO_URL, {
  serverSelectionTimeoutMS: 1500,
  connectTimeoutMS: 1500,
  monitorCommands: true,
});
const db = client.db('stepfold_test');
const collection = `search_plan_${process.pid}`;
const store = createMongoStore({ db, collection });

const idOf = (i: number) => `order-${String(i).padStart(5, '0')}`;
const order = (i: number): Snapshot =>
  makeTestSnapshot(idOf(i), { search: { customerId: `c-${i % CUSTOMERS}`, total: i } });

/** The finds sent on the instances' collection while `run` runs. */
async function findsOf(run: () => Promise<unknown>): Promise<Document[]> {
  const finds: Document[] = [];
  const listener = (e: CommandStartedEvent) => {
    if (e.commandName === 'find' && e.command['find'] === collection) finds.push(e.command);
  };
  client.on('commandStarted', listener);
  try {
    await run();
  } finally {
    client.off('commandStarted', listener);
  }
  return finds;
}

beforeAll(async () => {
  await requireServer(client);
  await store.setup();
  for (let from = 0; from < INSTANCES; from += IN_FLIGHT)
    await Promise.all(Array.from({ length: IN_FLIGHT }, (_, j) => store.create(order(from + j))));
}, 300_000);
afterAll(async () => {
  await db.dropCollection(collection).catch(() => {});
  await client.close();
});

describe(`mongo store: where customerId on ${INSTANCES} instances`, () => {
  it('sends one find on the search entries and, on MongoDB, reads only the matches', async () => {
    const expected = Array.from({ length: PER_CUSTOMER }, (_, k) => idOf(42 + k * CUSTOMERS));
    let ids: string[] = [];
    const finds = await findsOf(async () => {
      ids = (await store.list({ limit: 50, where: { customerId: 'c-42' } })).items.map((s) => s.id);
    });
    expect(ids).toEqual(expected);
    expect(finds).toHaveLength(1);
    const { filter, sort, limit } = finds[0]!;
    const plan = await db.command({
      explain: { find: collection, filter, sort, limit },
      verbosity: 'executionStats',
    });
    const stats = plan['executionStats'] as
      | { totalKeysExamined: number; totalDocsExamined: number; nReturned: number }
      | undefined;
    if (stats) {
      // MongoDB: an index scan of `stepfold_search` over the matching entries only.
      expect(JSON.stringify(plan['queryPlanner'])).toContain('stepfold_search');
      expect(stats.nReturned).toBe(PER_CUSTOMER);
      expect(stats.totalKeysExamined).toBeLessThanOrEqual(PER_CUSTOMER + 1);
      expect(stats.totalDocsExamined).toBe(PER_CUSTOMER);
    } else {
      // FerretDB 1.x on SQLite: no executionStats; SQLite's plan scans the collection's table.
      const text = JSON.stringify(plan['queryPlanner']);
      expect(text).toMatch(/detail=SCAN /);
      expect(text).not.toContain('USING INDEX');
      expect(plan['filterPushdown']).toBe(false);
    }
  });
});
