import { MongoClient } from 'mongodb';

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
