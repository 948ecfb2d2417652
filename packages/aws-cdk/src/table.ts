import { tableDefinition } from '@stepfold/store-dynamo';
import {
  type Attribute,
  AttributeType,
  BillingMode,
  type GlobalSecondaryIndexProps,
  ProjectionType,
  StreamViewType,
  type TableProps,
} from 'aws-cdk-lib/aws-dynamodb';

/** The CreateTable request the store's `setup()` sends, as `tableDefinition` returns it. */
export type StoreTableDefinition = ReturnType<typeof tableDefinition>;

/** Table props and global secondary indexes for CDK's `dynamodb.Table`. */
export interface TableShape {
  /** Keys, billing and stream of the table. */
  readonly props: Pick<TableProps, 'partitionKey' | 'sortKey' | 'billingMode' | 'stream'>;
  /** The indexes, each for `table.addGlobalSecondaryIndex`. */
  readonly indexes: GlobalSecondaryIndexProps[];
}

/** Why a definition cannot be mapped: the store grew something this construct does not know. */
function unmapped(what: string): Error {
  return new Error(
    `@stepfold/aws-cdk cannot map the store's table definition (${what}); ` +
      'use a @stepfold/aws-cdk release made for this @stepfold/store-dynamo',
  );
}

const ATTRIBUTE_TYPES: Record<string, AttributeType> = {
  S: AttributeType.STRING,
  N: AttributeType.NUMBER,
  B: AttributeType.BINARY,
};

const PROJECTIONS: Record<string, ProjectionType> = {
  KEYS_ONLY: ProjectionType.KEYS_ONLY,
  INCLUDE: ProjectionType.INCLUDE,
  ALL: ProjectionType.ALL,
};

const STREAM_VIEWS: Record<string, StreamViewType> = {
  NEW_IMAGE: StreamViewType.NEW_IMAGE,
  NEW_AND_OLD_IMAGES: StreamViewType.NEW_AND_OLD_IMAGES,
  OLD_IMAGE: StreamViewType.OLD_IMAGE,
  KEYS_ONLY: StreamViewType.KEYS_ONLY,
};

type KeySchema = StoreTableDefinition['KeySchema'];

/** The partition and sort key of a key schema, typed from the definition's attributes. */
function keysOf(
  def: StoreTableDefinition,
  schema: KeySchema,
  where: string,
): { partitionKey: Attribute; sortKey?: Attribute } {
  const attribute = (name: string | undefined): Attribute => {
    const found = def.AttributeDefinitions?.find((a) => a.AttributeName === name);
    const type = found?.AttributeType && ATTRIBUTE_TYPES[found.AttributeType];
    if (!name || !type) throw unmapped(`${where}: key ${name} has no attribute definition`);
    return { name, type };
  };
  const hash = schema?.filter((k) => k.KeyType === 'HASH') ?? [];
  const range = schema?.filter((k) => k.KeyType === 'RANGE') ?? [];
  if (hash.length !== 1 || range.length > 1 || hash.length + range.length !== schema?.length)
    throw unmapped(`${where}: key schema ${JSON.stringify(schema)}`);
  const partitionKey = attribute(hash[0]?.AttributeName);
  return range[0] ? { partitionKey, sortKey: attribute(range[0].AttributeName) } : { partitionKey };
}

/**
 * Maps the store's table definition to CDK props, failing on anything it would otherwise drop
 * (local indexes, an unknown projection or stream view), so the deployed table is the one the
 * store's `setup()` would create.
 */
export function tableShapeOf(def: StoreTableDefinition): TableShape {
  if (def.LocalSecondaryIndexes?.length) throw unmapped('local secondary indexes');
  if (def.BillingMode && def.BillingMode !== 'PAY_PER_REQUEST')
    throw unmapped(`billing mode ${def.BillingMode}`);
  const view = def.StreamSpecification?.StreamViewType;
  const stream = view ? STREAM_VIEWS[view] : undefined;
  if (def.StreamSpecification?.StreamEnabled && !stream) throw unmapped(`stream view ${view}`);
  const indexes = (def.GlobalSecondaryIndexes ?? []).map((index): GlobalSecondaryIndexProps => {
    const where = `index ${index.IndexName}`;
    const projectionType = PROJECTIONS[index.Projection?.ProjectionType ?? 'ALL'];
    if (!index.IndexName || !projectionType) throw unmapped(`${where}: projection`);
    const nonKey = index.Projection?.NonKeyAttributes;
    return {
      indexName: index.IndexName,
      ...keysOf(def, index.KeySchema, where),
      projectionType,
      ...(nonKey?.length ? { nonKeyAttributes: nonKey } : {}),
    };
  });
  return {
    props: {
      ...keysOf(def, def.KeySchema, 'table'),
      billingMode: BillingMode.PAY_PER_REQUEST,
      ...(def.StreamSpecification?.StreamEnabled && stream ? { stream } : {}),
    },
    indexes,
  };
}

/** The shape of the store's table with its wake stream, from `tableDefinition(…, { streams: true })`. */
export const storeTableShape = (): TableShape =>
  // The name is only a placeholder: the construct names the table itself.
  tableShapeOf(tableDefinition('stepfold_instances', { streams: true }));
