import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';

/** Endpoint of the DynamoDB test server (moto from `bash scripts/services.sh up dynamo`). */
export const DYNAMO_ENDPOINT = process.env.STEPFOLD_DYNAMO_ENDPOINT ?? 'http://127.0.0.1:8000';

/**
 * A client for the test server: fake static credentials (the SDK signs every request; moto does not
 * check), one retry and short timeouts, so calls fail fast while the server is stopped.
 */
export function testClient(endpoint = DYNAMO_ENDPOINT): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'stepfold', secretAccessKey: 'stepfold' },
    maxAttempts: 2,
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

const run = promisify(execFile);

/** Runs `bash scripts/services.sh <command> <name>` with extra environment (e.g. another port). */
export async function services(command: string, name: string, env: Record<string, string>): Promise<void> {
  const script = fileURLToPath(new URL('../../../scripts/services.sh', import.meta.url));
  await run('bash', [script, command, name], { env: { ...process.env, ...env }, timeout: 600_000 });
}
