/**
 * The deployable entries: `handler` for a Lambda function subscribed to the SQS queue (event source
 * mapping with `ReportBatchItemFailures`), and `streamHandler` for one subscribed to the table's
 * DynamoDB stream (new images; `tableDefinition(table, { streams: true })`), which drives what
 * other runners' writes announce (`runner.send`, hand-offs, timers). Configuration from the environment:
 *
 *   STEPFOLD_TABLE      DynamoDB table (default `stepfold_instances`; create it with `setup()`
 *                       or from `tableDefinition()` in your infrastructure code)
 *   STEPFOLD_QUEUE_URL  the queue wake messages go to (normally the queue this function reads)
 *   AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL_SQS  optional, for local servers (moto, ElasticMQ)
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { createRunner } from '@stepfold/engine';
import { createDynamoStore } from '@stepfold/store-dynamo';
import { createHandler } from './handler.js';
import { createSqsQueue } from './sqs-queue.js';
import type { SQSBatchResponse, SQSEvent } from './sqs-types.js';
import { createStreamHandler } from './stream-handler.js';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from './stream-types.js';
import { createHandlers, workflows } from './workflows.js';

const queueUrl = process.env['STEPFOLD_QUEUE_URL'];
const store = createDynamoStore({
  client: new DynamoDBClient({}),
  ...(process.env['STEPFOLD_TABLE'] ? { table: process.env['STEPFOLD_TABLE'] } : {}),
});
const runner = createRunner({ store, workflows, handlers: createHandlers() });
const queue = createSqsQueue(new SQSClient({}), queueUrl ?? '');
const handle = createHandler({ runner, queue });
// Without a queue, timers the stream announces for later are left to a scheduled processDue.
const handleStream = createStreamHandler({ runner, queue: queueUrl ? queue : undefined });

export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  if (!queueUrl) throw new Error('STEPFOLD_QUEUE_URL is not set');
  return handle(event);
}

export async function streamHandler(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  return handleStream(event);
}
