import type { StreamImage } from './stream-notice.js';

/**
 * What the store uses of a DynamoDB Streams client: a `DynamoDBStreamsClient` of
 * `@aws-sdk/client-dynamodb-streams` fits. Stated here so the store's types compile without that
 * optional package installed.
 */
export interface StreamsClient {
  // biome-ignore lint/suspicious/noExplicitAny: the SDK client's `send` is overloaded and generic per command
  send(command: any, options?: any): Promise<any>;
}

/** One record of a table's stream as GetRecords returns it: the fields the store and a consumer read. */
export interface StreamRecord {
  eventID?: string | undefined;
  eventName?: string | undefined;
  eventSource?: string | undefined;
  awsRegion?: string | undefined;
  dynamodb?:
    | {
        ApproximateCreationDateTime?: Date | undefined;
        Keys?: StreamImage | undefined;
        NewImage?: StreamImage | undefined;
        SequenceNumber?: string | undefined;
        SizeBytes?: number | undefined;
        StreamViewType?: string | undefined;
      }
    | undefined;
}
