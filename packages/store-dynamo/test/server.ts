import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { afterAll, beforeAll } from 'vitest';
import { ownPort, services } from '../../../scripts/services/test-servers.mjs';

/** Endpoint of the DynamoDB test server (moto from `bash scripts/services.sh up dynamo`). */
export const DYNAMO_ENDPOINT = process.env.STEPFOLD_DYNAMO_ENDPOINT ?? 'http://127.0.0.1:8000';

/**
 * A client for the test server: fake static credentials (the SDK signs every request; moto does not
 * check), one retry (`maxAttempts` 2) and short timeouts, so calls fail fast while the server is stopped.
 */
export function testClient(endpoint = DYNAMO_ENDPOINT, maxAttempts = 2): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'stepfold', secretAccessKey: 'stepfold' },
    maxAttempts,
    requestHandler: { connectionTimeout: 1000, requestTimeout: 5000 },
  });
}

/** A DynamoDB Streams client for the same server (`endpoint` to go through another address, a proxy say). */
export function testStreamsClient(endpoint = DYNAMO_ENDPOINT): DynamoDBStreamsClient {
  return new DynamoDBStreamsClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'stepfold', secretAccessKey: 'stepfold' },
    maxAttempts: 1,
    requestHandler: { connectionTimeout: 1000, requestTimeout: 5000 },
  });
}

/** Throws a clear error (never skips) when nothing answers at {@link DYNAMO_ENDPOINT}. */
export async function requireServer(client: DynamoDBClient): Promise<void> {
  try {
    await client.send(new ListTablesCommand({ Limit: 1 }));
  } catch (e) {
    throw new Error(
      `no DynamoDB at ${DYNAMO_ENDPOINT} (set STEPFOLD_DYNAMO_ENDPOINT or run \`bash scripts/services.sh up dynamo\`)`,
      { cause: e },
    );
  }
}

/** A moto server of one suite's own for its outage test, and what the suite does with it. */
export interface OutageServer {
  /** Its port: `process.env[variable]` when set, else one the OS found free. */
  port: number;
  /** A client with one attempt and short timeouts ({@link testClient}). */
  client: DynamoDBClient;
  /** Stops the server (moto keeps nothing: its tables go with it). */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
}

/**
 * A moto server on a port of its own (`process.env[variable]`, or a free one, so parallel runs
 * never share it) that only one suite's outage test uses, so stopping it disturbs nobody: it is
 * started (with the main server required) before the suite; after it, its client and `close`
 * (the suite's clients of the main server) are let go and the server is dropped.
 */
export async function outageServer(
  variable: string,
  main: DynamoDBClient,
  close: Array<{ destroy(): void }>,
): Promise<OutageServer> {
  const port = await ownPort(variable);
  const client = testClient(`http://127.0.0.1:${port}`, 1);
  beforeAll(async () => {
    await requireServer(main);
    await services('up', 'dynamo', port);
  });
  afterAll(async () => {
    for (const c of close) c.destroy();
    client.destroy();
    await services('drop', 'dynamo', port);
  });
  return {
    port,
    client,
    stop: () => services('stop', 'dynamo', port),
    start: () => services('start', 'dynamo', port),
  };
}
