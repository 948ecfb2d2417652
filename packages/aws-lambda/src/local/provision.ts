import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  ConflictException,
  CreateScheduleGroupCommand,
  type SchedulerClient,
} from '@aws-sdk/client-scheduler';
import { CreateQueueCommand, GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { createDynamoStore, ensureTable } from '@stepfold/store-dynamo';

/** What {@link provisionLocally} makes. */
export interface LocalResources {
  table: string;
  queueUrl: string;
  queueArn: string;
  group: string;
}

/** Options of {@link provisionLocally}. */
export interface ProvisionOptions {
  dynamodb: DynamoDBClient;
  sqs: SQSClient;
  scheduler: SchedulerClient;
  table: string;
  queueName: string;
  /** Default `default` (which exists on AWS; created here when missing). */
  group?: string | undefined;
  /** The queue's visibility timeout, seconds (default 30). */
  visibilityTimeout?: number | undefined;
}

/**
 * Creates what the CDK construct creates on AWS, on local servers: the table with its stream of
 * new images (one due shard, as the app's store), the queue and the schedule group. Idempotent.
 */
export async function provisionLocally(o: ProvisionOptions): Promise<LocalResources> {
  const group = o.group ?? 'default';
  await ensureTable(o.dynamodb, o.table, { streams: true, pollMs: 50 });
  await createDynamoStore({
    client: o.dynamodb,
    table: o.table,
    dueShards: 1,
    setup: { pollMs: 50 },
  }).setup();
  const { QueueUrl } = await o.sqs.send(
    new CreateQueueCommand({
      QueueName: o.queueName,
      Attributes: { VisibilityTimeout: String(o.visibilityTimeout ?? 30) },
    }),
  );
  const attrs = await o.sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
  try {
    await o.scheduler.send(new CreateScheduleGroupCommand({ Name: group }));
  } catch (e) {
    if (!(e instanceof ConflictException)) throw e;
  }
  return { table: o.table, queueUrl: QueueUrl!, queueArn: attrs.Attributes!.QueueArn!, group };
}
