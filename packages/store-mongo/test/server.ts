import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
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

/** Runs `bash scripts/services.sh <command> <name>` with extra environment (e.g. another port). */
export async function services(command: string, name: string, env: Record<string, string>): Promise<void> {
  const script = fileURLToPath(new URL('../../../scripts/services.sh', import.meta.url));
  await run('bash', [script, command, name], { env: { ...process.env, ...env }, timeout: 600_000 });
}

const run = promisify(execFile);
