// The test server's fidelity patch (scripts/ferretdb/serializer.go): MongoDB applies an update to
// one document atomically, and FerretDB 1.x does not. Its update is "find the matching documents,
// then write them back", with nothing holding the row in between, so two racing
// `updateOne({ _id, v })` calls can both match and both win. FerretDB/FerretDB#3079 (closed by
// #3296) made the SQLite backend's write atomic but left the handler's find-then-write; the race
// remains in v1.24, the version we build. Our build runs one command at a time through a proxy.
// This checks the server directly, with raw driver calls, so a change that loses the proxy fails
// here by name and not as a flaky adapter test elsewhere.
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MONGO_URL, requireServer, testClient } from './server.js';

const client = testClient();
const collection = client
  .db('stepfold_test')
  .collection<{ _id: string; v: number; by: string[] }>(`atomicity_${process.pid}`);

beforeAll(async () => {
  await requireServer(client);
});

afterAll(async () => {
  await collection.drop().catch(() => {});
  await client.close();
});

describe('test server (FerretDB): an update of one document is atomic', () => {
  it('eight clients racing conditional updates on one document: one winner per version, no lost update', async () => {
    const id = 'race';
    await collection.insertOne({ _id: id, v: 0, by: [] });
    // One client each, so the writers use separate connections, as separate processes would.
    const writers = Array.from({ length: 8 }, () => new MongoClient(MONGO_URL, { maxPoolSize: 1 }));
    let wins = 0;
    try {
      await Promise.all(
        writers.map(async (w, n) => {
          const mine = w
            .db('stepfold_test')
            .collection<{ _id: string; v: number; by: string[] }>(collection.collectionName);
          for (let round = 0; round < 25; round++) {
            const seen = await mine.findOne({ _id: id });
            const r = await mine.updateOne(
              { _id: id, v: seen!.v },
              { $set: { v: seen!.v + 1 }, $push: { by: `${n}:${round}` } },
            );
            if (r.modifiedCount === 1) wins++;
          }
        }),
      );
    } finally {
      await Promise.all(writers.map((w) => w.close()));
    }
    const doc = await collection.findOne({ _id: id });
    // Every accepted update moved the version by one and left its mark: two winners of one
    // version would count twice here but move the version once.
    expect(wins).toBeGreaterThan(0);
    expect(doc!.v).toBe(wins);
    expect(doc!.by).toHaveLength(wins);
  });
});
