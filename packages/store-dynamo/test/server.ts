import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { afterAll, beforeAll } from 'vitest';
import { type TestServer, testServer } from '../../../scripts/services/test-servers.mjs';

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

/** A moto server of one suite's own for its outage test, with a client of one attempt ({@link testClient}). */
export type OutageServer = TestServer & { client: DynamoDBClient };

/**
 * A moto server on a port of its own (`process.env[variable]`, or a free one, so parallel runs
 * never share it) that only one suite's outage test uses, so stopping it disturbs nobody (a stop
 * loses its tables): it is started (with the main server required) before the suite; after it,
 * its client and `close` (the suite's clients of the main server) are let go and it is dropped.
 */
export async function outageServer(
  variable: string,
  main: DynamoDBClient,
  close: Array<{ destroy(): void }>,
): Promise<OutageServer> {
  const server = await testServer('dynamo', variable);
  const client = testClient(`http://127.0.0.1:${server.port}`, 1);
  beforeAll(async () => {
    await requireServer(main);
    await server.up();
  });
  afterAll(async () => {
    for (const c of close) c.destroy();
    client.destroy();
    await server.drop();
  });
  return { ...server, client };
}
