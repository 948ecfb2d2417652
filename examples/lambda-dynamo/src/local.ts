/**
 * Runs the Lambda handler on this machine: a local DynamoDB (moto) for the store, an SQS-compatible server
 * (ElasticMQ) for the queue, and {@link pollQueue} in place of Lambda's event source mapping.
 *
 *   STEPFOLD_DYNAMO_ENDPOINT  default http://127.0.0.1:8000
 *   STEPFOLD_SQS_ENDPOINT     default http://127.0.0.1:9324
 *   STEPFOLD_TABLE, STEPFOLD_QUEUE (queue name, default stepfold-events)
 *
 * Send messages with any SQS client, e.g.
 *   aws --endpoint-url http://127.0.0.1:9324 sqs send-message --queue-url … \
 *     --message-body '{"type":"start","id":"order-1","workflow":"order","input":{"sku":"A","amount":5}}'
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createRunner } from '@stepfold/engine';
import { createDynamoStore } from '@stepfold/store-dynamo';
import { createHandler } from './handler.js';
import { createSqsQueue, pollQueue } from './sqs-queue.js';
import { createHandlers, workflows } from './workflows.js';

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
const region = 'us-east-1';
const dynamo = new DynamoDBClient({
  endpoint: process.env['STEPFOLD_DYNAMO_ENDPOINT'] ?? 'http://127.0.0.1:8000',
  region,
  credentials,
});
const sqs = new SQSClient({
  endpoint: process.env['STEPFOLD_SQS_ENDPOINT'] ?? 'http://127.0.0.1:9324',
  region,
  credentials,
});

const store = createDynamoStore({
  client: dynamo,
  ...(process.env['STEPFOLD_TABLE'] ? { table: process.env['STEPFOLD_TABLE'] } : {}),
});
await store.setup();
const { QueueUrl } = await sqs.send(
  new CreateQueueCommand({ QueueName: process.env['STEPFOLD_QUEUE'] ?? 'stepfold-events' }),
);
const runner = createRunner({ store, workflows, handlers: createHandlers() });
const handler = createHandler({ runner, queue: createSqsQueue(sqs, QueueUrl!) });

const stop = new AbortController();
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => stop.abort());
console.log(JSON.stringify({ listening: QueueUrl }));
await pollQueue({
  client: sqs,
  queueUrl: QueueUrl!,
  handler,
  signal: stop.signal,
  onError: (e) => console.error(e),
});
sqs.destroy();
dynamo.destroy();
