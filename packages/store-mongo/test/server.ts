import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll } from 'vitest';

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

/** A FerretDB of one suite's own for its outage test, and what the suite does with it. */
export interface OutageServer {
  /** A client with small timeouts (see {@link testClient}). */
  client: MongoClient;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/**
 * A FerretDB on `port` that only one suite's outage test uses, so stopping it disturbs nobody:
 * it is started (with the main server required) before the suite, and both clients are closed
 * after it (`main`, the suite's client of the main server).
 */
export function outageServer(port: string, main: MongoClient): OutageServer {
  const env = { STEPFOLD_MONGO_PORT: port };
  const client = new MongoClient(`mongodb://127.0.0.1:${port}/`, {
    serverSelectionTimeoutMS: 1500,
    connectTimeoutMS: 1500,
  });
  beforeAll(async () => {
    await requireServer(main);
    await services('up', 'mongo', env);
  });
  afterAll(async () => {
    await main.close();
    await client.close();
  });
  return { client, stop: () => services('stop', 'mongo', env), start: () => services('start', 'mongo', env) };
}
