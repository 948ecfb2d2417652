import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  type DynamoDBClient,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import { storeGuard } from '@stepfold/engine';
import { isUnavailable } from './map-error.js';

const guard = storeGuard('dynamodb', isUnavailable);

/** GSI on (dueShard, dueKey), keys only: `listDue` is one Query over it. */
export const DUE_INDEX = 'due-index';
/** GSI on (status, id) with `workflow` projected: `list` filtered by status. */
export const STATUS_INDEX = 'status-index';
/** GSI on (workflow, id), keys only: `list` filtered by workflow alone. */
export const WORKFLOW_INDEX = 'workflow-index';
/** GSI on (listShard, id), keys only: `list` with no filter, in id order. */
export const LIST_INDEX = 'list-index';

const REQUIRED_INDEXES = [DUE_INDEX, STATUS_INDEX, WORKFLOW_INDEX, LIST_INDEX];

const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;

/** Throws unless `name` is a valid DynamoDB table name (3-255 of `A-Z a-z 0-9 _ . -`). */
export function assertTableName(name: string): void {
  if (!TABLE_NAME.test(name)) throw new TypeError(`invalid DynamoDB table name ${JSON.stringify(name)}`);
}

/**
 * The CreateTable request `setup` sends (on-demand billing), for users who manage tables with
 * infrastructure-as-code instead.
 */
export function tableDefinition(table: string): CreateTableCommandInput {
  return {
    TableName: table,
    BillingMode: 'PAY_PER_REQUEST',
    KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
    AttributeDefinitions: [
      { AttributeName: 'id', AttributeType: 'S' },
      { AttributeName: 'dueShard', AttributeType: 'S' },
      { AttributeName: 'dueKey', AttributeType: 'S' },
      { AttributeName: 'status', AttributeType: 'S' },
      { AttributeName: 'workflow', AttributeType: 'S' },
      { AttributeName: 'listShard', AttributeType: 'S' },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: DUE_INDEX,
        KeySchema: [
          { AttributeName: 'dueShard', KeyType: 'HASH' },
          { AttributeName: 'dueKey', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
      {
        IndexName: STATUS_INDEX,
        KeySchema: [
          { AttributeName: 'status', KeyType: 'HASH' },
          { AttributeName: 'id', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['workflow'] },
      },
      {
        IndexName: WORKFLOW_INDEX,
        KeySchema: [
          { AttributeName: 'workflow', KeyType: 'HASH' },
          { AttributeName: 'id', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
      {
        IndexName: LIST_INDEX,
        KeySchema: [
          { AttributeName: 'listShard', KeyType: 'HASH' },
          { AttributeName: 'id', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      },
    ],
  };
}

function nameOf(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null ? (e as { name?: string }).name : undefined;
}

async function describe(client: DynamoDBClient, table: string): Promise<TableDescription | null> {
  try {
    const out = await guard('setup', () => client.send(new DescribeTableCommand({ TableName: table })));
    return out.Table ?? null;
  } catch (e) {
    if (nameOf(e) === 'ResourceNotFoundException') return null;
    throw e;
  }
}

function isActive(t: TableDescription): boolean {
  return (
    t.TableStatus === 'ACTIVE' && (t.GlobalSecondaryIndexes ?? []).every((i) => i.IndexStatus === 'ACTIVE')
  );
}

/** Options of {@link ensureTable}. */
export interface EnsureTableOptions {
  /** Give up waiting for ACTIVE after this long (default 5 minutes). */
  timeoutMs?: number;
  /** Delay between DescribeTable polls (default 250 ms). */
  pollMs?: number;
}

/**
 * Creates the table with its indexes unless it exists, then waits until it and every index are ACTIVE.
 * Safe to run concurrently and repeatedly; an existing table missing one of the indexes is an error.
 */
export async function ensureTable(
  client: DynamoDBClient,
  table: string,
  options: EnsureTableOptions = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 5 * 60_000;
  const pollMs = options.pollMs ?? 250;
  let current = await describe(client, table);
  if (!current) {
    try {
      await guard('setup', () => client.send(new CreateTableCommand(tableDefinition(table))));
    } catch (e) {
      // Another process created it between our describe and create.
      if (nameOf(e) !== 'ResourceInUseException') throw e;
    }
    current = await describe(client, table);
  }
  const deadline = Date.now() + timeoutMs;
  while (!current || !isActive(current)) {
    if (Date.now() > deadline)
      throw new Error(`DynamoDB table ${table} did not become ACTIVE in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    current = await describe(client, table);
  }
  const present = new Set((current.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName));
  const missing = REQUIRED_INDEXES.filter((i) => !present.has(i));
  if (missing.length) {
    throw new Error(`DynamoDB table ${table} exists but lacks the index(es) ${missing.join(', ')}`);
  }
}
