/**
 * The parts of the AWS Lambda DynamoDB Streams event types this example uses, shaped like
 * `@types/aws-lambda`'s `DynamoDBStreamEvent`, `DynamoDBRecord` and `DynamoDBBatchResponse` (so a
 * real deployment can pass those through).
 */
import type { ImageValue } from '@stepfold/store-dynamo';

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

/**
 * Partial batch response (`ReportBatchItemFailures` on the event source mapping): Lambda retries
 * the batch from the first record listed (by `SequenceNumber`).
 */
export interface DynamoDBBatchResponse {
  batchItemFailures: Array<{ itemIdentifier: string }>;
}
