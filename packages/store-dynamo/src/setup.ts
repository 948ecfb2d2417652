import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  type DynamoDBClient,
  type GlobalSecondaryIndex,
  type StreamSpecification,
  type TableDescription,
  UpdateTableCommand,
} from '@aws-sdk/client-dynamodb';
import { storeGuard } from '@stepfold/engine';
import { isUnavailable } from './map-error.js';
import { WakeStreamError } from './wake-stream-error.js';

const guard = storeGuard('dynamodb', isUnavailable);

/** GSI on (dueShard, dueKey), keys only: `listDue` is one Query per shard (`due#<n>`) over it. */
export const DUE_INDEX = 'due-index';
/** GSI on (laneShard, dueKey), keys only: `listDue(…, { workflow })`, one Query per `<workflow>#<n>`. */
export const LANE_INDEX = 'lane-index';
/** GSI on (status, id) with `workflow` projected: `list` filtered by status. */
export const STATUS_INDEX = 'status-index';
/** GSI on (workflow, id), keys only: `list` filtered by workflow alone. */
export const WORKFLOW_INDEX = 'workflow-index';
/** GSI on (listShard, id), keys only: `list` with no filter, in id order. */
export const LIST_INDEX = 'list-index';
/** GSI on (sentShard, sentKey), keys only: the inbox's claim, one Query per `sent#<n>`. */
export const SENT_INDEX = 'sent-index';
/**
 * GSI on (searchName, searchKey), keys only: `list` by search attributes. Only the index items
 * (one per instance and attribute with a value) have these attributes; see search-key.ts.
 */
export const SEARCH_INDEX = 'search-index';

const REQUIRED_INDEXES = [
  DUE_INDEX,
  STATUS_INDEX,
  WORKFLOW_INDEX,
  LIST_INDEX,
  LANE_INDEX,
  SENT_INDEX,
  SEARCH_INDEX,
];

/** A keys-only GSI on two string attributes. */
const keysOnly = (name: string, hash: string, range: string): GlobalSecondaryIndex => ({
  IndexName: name,
  KeySchema: [
    { AttributeName: hash, KeyType: 'HASH' },
    { AttributeName: range, KeyType: 'RANGE' },
  ],
  Projection: { ProjectionType: 'KEYS_ONLY' },
});

// The indexes later versions added: `setup` adds each to a table made without it.
const ADDED_INDEXES = [
  keysOnly(LANE_INDEX, 'laneShard', 'dueKey'),
  keysOnly(SENT_INDEX, 'sentShard', 'sentKey'),
  keysOnly(SEARCH_INDEX, 'searchName', 'searchKey'),
];

const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;

/** Throws unless `name` is a valid DynamoDB table name (3-255 of `A-Z a-z 0-9 _ . -`). */
export function assertTableName(name: string): void {
  if (!TABLE_NAME.test(name)) throw new TypeError(`invalid DynamoDB table name ${JSON.stringify(name)}`);
}

/**
 * The stream wake notices read: new images, since a notice needs the item's wake time, note and
 * inbox (KEYS_ONLY would take a read of the whole item per record and subscriber instead).
 */
export const WAKE_STREAM: StreamSpecification = { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' };

/** Whether a table's stream carries what wake notices read (new images). */
export function isWakeStream(spec: StreamSpecification | undefined): boolean {
  return (
    spec?.StreamEnabled === true &&
    (spec.StreamViewType === 'NEW_IMAGE' || spec.StreamViewType === 'NEW_AND_OLD_IMAGES')
  );
}

/** Options of {@link tableDefinition}. */
export interface TableDefinitionOptions {
  /** Enable the stream the store's wake notices read ({@link WAKE_STREAM}). */
  streams?: boolean | undefined;
}

/**
 * The CreateTable request `setup` sends (on-demand billing), for users who manage tables with
 * infrastructure-as-code instead.
 *
 * @example
 * const input = tableDefinition('stepfold_instances', { streams: true }); // with the wake stream
 */
export function tableDefinition(
  table: string,
  options: TableDefinitionOptions = {},
): CreateTableCommandInput {
  return {
    TableName: table,
    ...(options.streams ? { StreamSpecification: WAKE_STREAM } : {}),
    BillingMode: 'PAY_PER_REQUEST',
    KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
    // Every key attribute is a string.
    AttributeDefinitions: [
      ...['id', 'dueShard', 'dueKey', 'status', 'workflow', 'listShard'],
      ...['laneShard', 'sentShard', 'sentKey', 'searchName', 'searchKey'],
    ].map((AttributeName) => ({ AttributeName, AttributeType: 'S' })),
    GlobalSecondaryIndexes: [
      keysOnly(DUE_INDEX, 'dueShard', 'dueKey'),
      {
        ...keysOnly(STATUS_INDEX, 'status', 'id'),
        Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['workflow'] },
      },
      keysOnly(WORKFLOW_INDEX, 'workflow', 'id'),
      keysOnly(LIST_INDEX, 'listShard', 'id'),
      ...ADDED_INDEXES,
    ],
  };
}

function nameOf(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null ? (e as { name?: string }).name : undefined;
}

async function describe(client: DynamoDBClient, table: string): Promise<TableDescription | null> {
  try {
    const out = await client.send(new DescribeTableCommand({ TableName: table }));
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
  timeoutMs?: number | undefined;
  /** Delay between DescribeTable polls (default 250 ms). */
  pollMs?: number | undefined;
  /**
   * Enable the table's stream for wake notices ({@link WAKE_STREAM}), with UpdateTable on a table
   * made without one; a table whose stream has another view type is an error (`NO_WAKE_STREAM`).
   */
  streams?: boolean | undefined;
}

async function waitActive(
  client: DynamoDBClient,
  table: string,
  options: EnsureTableOptions,
): Promise<TableDescription> {
  const timeoutMs = options.timeoutMs ?? 5 * 60_000;
  const pollMs = options.pollMs ?? 250;
  const deadline = Date.now() + timeoutMs;
  let current = await describe(client, table);
  while (!current || !isActive(current)) {
    if (Date.now() > deadline)
      throw new Error(`DynamoDB table ${table} did not become ACTIVE in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    current = await describe(client, table);
  }
  return current;
}

// Adds an index to a table made before it existed. Another setup doing the same at once makes
// DynamoDB refuse ours (the index exists, or the table is being updated): waiting covers both.
async function addIndex(client: DynamoDBClient, table: string, index: GlobalSecondaryIndex): Promise<void> {
  try {
    await client.send(
      new UpdateTableCommand({
        TableName: table,
        AttributeDefinitions: (index.KeySchema ?? []).map((k) => ({
          AttributeName: k.AttributeName,
          AttributeType: 'S',
        })),
        GlobalSecondaryIndexUpdates: [{ Create: index }],
      }),
    );
  } catch (e) {
    const name = nameOf(e);
    const message = e instanceof Error ? e.message : '';
    const raced =
      name === 'ResourceInUseException' ||
      name === 'LimitExceededException' ||
      (name === 'ValidationException' && /already exists/i.test(message));
    if (!raced) throw e;
  }
}

/**
 * Creates the table with its indexes unless it exists, then waits until it and every index are ACTIVE.
 * A table made by an older version without `lane-index`, `sent-index` or `search-index` gets them (UpdateTable,
 * then waiting while DynamoDB backfills each). Safe to run concurrently and repeatedly; an existing
 * table missing any other index is an error.
 */
export async function ensureTable(
  client: DynamoDBClient,
  table: string,
  options: EnsureTableOptions = {},
): Promise<void> {
  await guard('setup', () => prepareTable(client, table, options));
}

/** {@link ensureTable} without the guard: the store's `setup` is guarded already. */
export async function prepareTable(client: DynamoDBClient, table: string, options: EnsureTableOptions) {
  if (!(await describe(client, table))) {
    try {
      await client.send(new CreateTableCommand(tableDefinition(table, options)));
    } catch (e) {
      // Another process created it between our describe and create.
      if (nameOf(e) !== 'ResourceInUseException') throw e;
    }
  }
  let current = await waitActive(client, table, options);
  const has = (name: string) => (current.GlobalSecondaryIndexes ?? []).some((i) => i.IndexName === name);
  // One at a time: DynamoDB builds one new index per UpdateTable.
  for (const index of ADDED_INDEXES) {
    if (has(index.IndexName!)) continue;
    await addIndex(client, table, index);
    current = await waitActive(client, table, options);
  }
  const missing = REQUIRED_INDEXES.filter((i) => !has(i));
  if (missing.length) {
    throw new Error(`DynamoDB table ${table} exists but lacks the index(es) ${missing.join(', ')}`);
  }
  if (options.streams && !isWakeStream(current.StreamSpecification))
    await enableStream(client, current, options);
}

// A stream of another view type cannot be changed in place (DynamoDB needs it disabled first,
// which would cut off its other readers): that is left to the table's owner.
async function enableStream(client: DynamoDBClient, current: TableDescription, options: EnsureTableOptions) {
  const table = current.TableName!;
  if (current.StreamSpecification?.StreamEnabled) throw WakeStreamError.viewType(table, current);
  try {
    await client.send(new UpdateTableCommand({ TableName: table, StreamSpecification: WAKE_STREAM }));
  } catch (e) {
    // Another setup enabled it meanwhile, or the table is being updated: the wait below settles it.
    const name = nameOf(e);
    if (name !== 'ResourceInUseException' && name !== 'ValidationException') throw e;
  }
  const after = await waitActive(client, table, options);
  if (!isWakeStream(after.StreamSpecification)) throw WakeStreamError.viewType(table, after);
}
