/**
 * The parts of the AWS Lambda SQS event types this example uses, shaped like `@types/aws-lambda`'s
 * `SQSEvent`, `SQSRecord` and `SQSBatchResponse` (so a real deployment can pass those through).
 */

/** One SQS message as Lambda's SQS event source hands it over. */
export interface SQSRecord {
  messageId: string;
  receiptHandle: string;
  body: string;
  attributes: {
    ApproximateReceiveCount: string;
    SentTimestamp: string;
    SenderId: string;
    ApproximateFirstReceiveTimestamp: string;
  };
  messageAttributes: Record<string, unknown>;
  md5OfBody: string;
  eventSource: string;
  eventSourceARN: string;
  awsRegion: string;
}

/** A batch of SQS messages. */
export interface SQSEvent {
  Records: SQSRecord[];
}

/**
 * Partial batch response (`ReportBatchItemFailures` on the event source mapping): the messages
 * listed here stay on the queue and come back after their visibility timeout; the rest are deleted.
 */
export interface SQSBatchResponse {
  batchItemFailures: Array<{ itemIdentifier: string }>;
}
