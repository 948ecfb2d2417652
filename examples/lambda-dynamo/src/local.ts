/**
 * Runs the four functions on this machine against moto (DynamoDB and its stream, SQS, Scheduler on
 * one port): creates the table, queue and schedule group, runs the queue, stream and sweep
 * functions as Lambda's event sources would, fires due schedules, and serves the API on
 * http://127.0.0.1:3000 (as an HTTP API would hand requests over).
 *
 *   AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:8000 AWS_ENDPOINT_URL_DYNAMODB_STREAMS=http://127.0.0.1:8000 \
 *   AWS_ENDPOINT_URL_SQS=http://127.0.0.1:8000 AWS_ENDPOINT_URL_SCHEDULER=http://127.0.0.1:8000 \
 *   AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local node dist/local.js
 *
 *   curl -X POST localhost:3000/workflows/order/instances/order-1 -d '{"sku":"A","amount":5}'
 */
import { createServer } from 'node:http';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SQSClient } from '@aws-sdk/client-sqs';
import { provisionLocally, serveLocally } from '@stepfold/aws-lambda/local';

const clients = {
  dynamodb: new DynamoDBClient({}),
  sqs: new SQSClient({}),
  scheduler: new SchedulerClient({}),
};
const r = await provisionLocally({
  ...clients,
  table: process.env['STEPFOLD_TABLE'] ?? 'stepfold_instances',
  queueName: 'stepfold-events',
  group: process.env['STEPFOLD_SCHEDULE_GROUP'] ?? 'stepfold',
});
process.env['STEPFOLD_TABLE'] = r.table;
process.env['STEPFOLD_QUEUE_URL'] = r.queueUrl;
process.env['STEPFOLD_QUEUE_ARN'] = r.queueArn;
process.env['STEPFOLD_SCHEDULE_GROUP'] = r.group;
process.env['STEPFOLD_SCHEDULER_ROLE_ARN'] ??= 'arn:aws:iam::123456789012:role/stepfold-scheduler';
// The module reads the environment when it loads, as in a Lambda.
const app = await import('./lambda.js');

const server = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => {
    body += chunk.toString();
  });
  req.on('end', async () => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const out = await app.api({
      rawPath: url.pathname,
      rawQueryString: url.search.slice(1),
      body,
      requestContext: { stage: '$default', http: { method: req.method ?? 'GET' } },
    });
    res.writeHead(out.statusCode, out.headers).end(out.body);
  });
});
server.listen(3000, '127.0.0.1');

const stop = new AbortController();
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => stop.abort());
console.log(JSON.stringify({ api: 'http://127.0.0.1:3000', ...r }));
await serveLocally({ app, ...clients, streams: new DynamoDBStreamsClient({}), ...r, signal: stop.signal });
server.close();
