/**
 * Runs the Lambda handlers on this machine: a DynamoDB server for the store, an SQS-compatible server
 * (ElasticMQ) for the queue, {@link pollQueue} in place of Lambda's SQS event source mapping and
 * {@link pollStream} in place of its DynamoDB stream one (the table's stream is enabled).
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
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createRunner } from '@stepfold/engine';
import { createDynamoStore, DEFAULT_TABLE, ensureTable } from '@stepfold/store-dynamo';
import { createHandler } from './handler.js';
import { createSqsQueue, pollQueue } from './sqs-queue.js';
import { createStreamHandler } from './stream-handler.js';
import { pollStream } from './stream-poller.js';
import { createHandlers, workflows } from './workflows.js';

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
const region = 'us-east-1';
const dynamoEndpoint = process.env['STEPFOLD_DYNAMO_ENDPOINT'] ?? 'http://127.0.0.1:8000';
const dynamo = new DynamoDBClient({ endpoint: dynamoEndpoint, region, credentials });
const streams = new DynamoDBStreamsClient({ endpoint: dynamoEndpoint, region, credentials });
const sqs = new SQSClient({
  endpoint: process.env['STEPFOLD_SQS_ENDPOINT'] ?? 'http://127.0.0.1:9324',
  region,
  credentials,
});

const table = process.env['STEPFOLD_TABLE'] ?? DEFAULT_TABLE;
const store = createDynamoStore({ client: dynamo, table });
await ensureTable(dynamo, table, { streams: true }); // the table and its stream
await store.setup();
const { QueueUrl } = await sqs.send(
  new CreateQueueCommand({ QueueName: process.env['STEPFOLD_QUEUE'] ?? 'stepfold-events' }),
);
const runner = createRunner({ store, workflows, handlers: createHandlers() });
const queue = createSqsQueue(sqs, QueueUrl!);
const handler = createHandler({ runner, queue });
const streamHandler = createStreamHandler({ runner, queue });

const stop = new AbortController();
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => stop.abort());
console.log(JSON.stringify({ listening: QueueUrl }));
const onError = (e: unknown) => console.error(e);
await Promise.all([
  pollQueue({ client: sqs, queueUrl: QueueUrl!, handler, signal: stop.signal, onError }),
  pollStream({ client: dynamo, streams, table, handler: streamHandler, signal: stop.signal, onError }),
]);
streams.destroy();
sqs.destroy();
dynamo.destroy();
