/**
 * The parts of AWS Lambda's event types the handlers read, shaped like `@types/aws-lambda`'s (so a
 * deployment can pass those through) without depending on it: SQS, DynamoDB Streams, API Gateway
 * (HTTP API v2 and REST v1 proxy) and a scheduled rule.
 */
import type { ImageValue } from '@stepfold/store-dynamo';

/** One SQS message as Lambda's SQS event source hands it over. */
export interface SQSRecord {
  messageId: string;
  receiptHandle?: string | undefined;
  body: string;
  attributes?: Record<string, string | undefined> | undefined;
  messageAttributes?: Record<string, unknown> | undefined;
  eventSource?: string | undefined;
  eventSourceARN?: string | undefined;
  awsRegion?: string | undefined;
}

/** A batch of SQS messages. */
export interface SQSEvent {
  Records: SQSRecord[];
}

/**
 * Partial batch response (`ReportBatchItemFailures` on the event source mapping). SQS: the
 * messages listed come back after their visibility timeout, the rest are deleted. DynamoDB
 * Streams: the batch is retried from the first record listed (by `SequenceNumber`).
 */
export interface BatchResponse {
  batchItemFailures: Array<{ itemIdentifier: string }>;
}

/** One change of one item, as Lambda's DynamoDB event source hands it over. */
export interface DynamoDBRecord {
  eventID?: string | undefined;
  eventName?: 'INSERT' | 'MODIFY' | 'REMOVE' | undefined;
  eventSource?: string | undefined;
  awsRegion?: string | undefined;
  eventSourceARN?: string | undefined;
  dynamodb?:
    | {
        /** Epoch seconds (Lambda's shape; the SDK gives a Date). */
        ApproximateCreationDateTime?: number | undefined;
        Keys?: Record<string, ImageValue> | undefined;
        NewImage?: Record<string, ImageValue> | undefined;
        SequenceNumber?: string | undefined;
        SizeBytes?: number | undefined;
        StreamViewType?: string | undefined;
      }
    | undefined;
}

/** A batch of stream records, oldest first within a shard. */
export interface DynamoDBStreamEvent {
  Records: DynamoDBRecord[];
}

/** An API Gateway proxy event: HTTP API (payload 2.0) or REST API (payload 1.0); only what routing reads. */
export interface ApiGatewayEvent {
  /** 2.0: the path with the stage prefix for a named stage. */
  rawPath?: string | undefined;
  rawQueryString?: string | undefined;
  /** 1.0: the resource path, without the stage. */
  path?: string | undefined;
  /** 1.0: the method. */
  httpMethod?: string | undefined;
  queryStringParameters?: Record<string, string | undefined> | null | undefined;
  headers?: Record<string, string | undefined> | null | undefined;
  body?: string | null | undefined;
  isBase64Encoded?: boolean | undefined;
  requestContext?:
    | {
        stage?: string | undefined;
        /** 2.0: the method. */
        http?: { method?: string | undefined; path?: string | undefined } | undefined;
      }
    | undefined;
}

/** What an API Gateway proxy integration answers (both payload versions read this shape). */
export interface ApiGatewayResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** An EventBridge scheduled rule's event (`rate(1 minute)`); the sweep reads nothing of it. */
export interface ScheduledEvent {
  time?: string | undefined;
  [key: string]: unknown;
}

/** What the sweep did: the instances it ticked. */
export interface SweepResult {
  ticked: string[];
}
