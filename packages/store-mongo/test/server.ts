import { MongoClient } from 'mongodb';
import { afterAll, beforeAll } from 'vitest';
import { type TestServer, testServer } from '../../../scripts/services/test-servers.mjs';

/** URL of the MongoDB-protocol test server (FerretDB from `bash scripts/services.sh up mongo`). */
export const MONGO_URL = process.env.STEPFOLD_MONGO_URL ?? 'mongodb://127.0.0.1:27017/';

/** A client with small timeouts, so calls fail within ~1.5 s while the server is stopped. */
export function testClient(): MongoClient {
  return new MongoClient(MONGO_URL, { serverSelectionTimeoutMS: 1500, connectTimeoutMS: 1500 });
}

/** Throws a clear error (never skips) when no server answers at {@link MONGO_URL}. */
export async function requireServer(client: MongoClient): Promise<void> {
  try {
    await client.db('admin').command({ ping: 1 });
  } catch (e) {
    throw new Error(
      `no MongoDB-protocol server at ${MONGO_URL} (set STEPFOLD_MONGO_URL or run \`bash scripts/services.sh up mongo\`)`,
      { cause: e },
    );
  }
}

/** A FerretDB of one suite's own for its outage test, with a client of it (small timeouts, see {@link testClient}). */
export type OutageServer = TestServer & { client: MongoClient };

/**
 * A FerretDB on a port of its own (`process.env[variable]`, or a free one, so parallel runs never
 * share it) that only one suite's outage test uses, so stopping it disturbs nobody: it is started
 * (with the main server required) before the suite; after it, both clients are closed (`main`,
 * the suite's client of the main server) and the server is dropped with its data.
 */
export async function outageServer(variable: string, main: MongoClient): Promise<OutageServer> {
  const server = await testServer('mongo', variable);
  const client = new MongoClient(`mongodb://127.0.0.1:${server.port}/`, {
    serverSelectionTimeoutMS: 1500,
    connectTimeoutMS: 1500,
  });
  beforeAll(async () => {
    await requireServer(main);
    await server.up();
  });
  afterAll(async () => {
    await main.close();
    await client.close();
    await server.drop();
  });
  return { ...server, client };
}
