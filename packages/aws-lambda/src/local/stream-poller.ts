import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { openStreamReader, type StreamReader } from '@stepfold/store-dynamo';
import type { BatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from '../lambda-types.js';

/** Options of {@link pollStream}. */
export interface StreamPollOptions {
  client: DynamoDBClient;
  streams: DynamoDBStreamsClient;
  table: string;
  handler: (event: DynamoDBStreamEvent) => Promise<BatchResponse>;
  /** Stops the loop (after the batch in hand is done). */
  signal: AbortSignal;
  /**
   * Where the first open starts in each shard: `LATEST` (default; as a mapping created now) or
   * `TRIM_HORIZON` (every record of the last 24 h: a fresh table read from its first write).
   */
  from?: 'LATEST' | 'TRIM_HORIZON' | undefined;
  /** Pause after a pass with no records, ms (default 250; Lambda polls a shard about 4 times a second). */
  idleMs?: number;
  /** Called with an error of the loop itself or a batch the handler failed; the loop goes on. */
  onError?: (error: unknown) => void;
}

/** A record from the SDK as Lambda would deliver it (the creation time in epoch seconds). */
function asLambda(r: Awaited<ReturnType<StreamReader['read']>>[number], arn: string): DynamoDBRecord {
  const d = r.dynamodb;
  return {
    eventID: r.eventID,
    eventName: r.eventName,
    eventSource: r.eventSource,
    awsRegion: r.awsRegion,
    eventSourceARN: arn,
    dynamodb: d && {
      ApproximateCreationDateTime:
        d.ApproximateCreationDateTime && d.ApproximateCreationDateTime.getTime() / 1000,
      Keys: d.Keys,
      NewImage: d.NewImage,
      SequenceNumber: d.SequenceNumber,
      SizeBytes: d.SizeBytes,
      StreamViewType: d.StreamViewType,
    },
  } as DynamoDBRecord;
}

/**
 * What Lambda's DynamoDB event source mapping does, for running the stream handler outside AWS:
 * read every shard of the table's stream from now on, hand each pass's records to the handler as
 * a `DynamoDBStreamEvent`. Unlike Lambda it does not retry a failed batch (it reports it and goes
 * on: the records are hints, polling or the wake queue finds what they named); a read that fails
 * opens the stream again from now (`from` applies to the first open only).
 */
export async function pollStream(o: StreamPollOptions): Promise<void> {
  const idleMs = o.idleMs ?? 250;
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  let reader: StreamReader | undefined;
  let from = o.from ?? 'LATEST';
  while (!o.signal.aborted) {
    try {
      reader ??= await openStreamReader({
        client: o.client,
        streams: o.streams,
        table: o.table,
        signal: o.signal,
        from,
      });
      from = 'LATEST';
      const records = await reader.read();
      if (!records.length) {
        await pause(idleMs);
        continue;
      }
      const arn = reader.arn;
      const { batchItemFailures } = await o.handler({ Records: records.map((r) => asLambda(r, arn)) });
      if (batchItemFailures.length)
        o.onError?.(new Error(`batch failed from ${batchItemFailures[0]!.itemIdentifier}`));
    } catch (e) {
      if (o.signal.aborted) return;
      reader = undefined;
      o.onError?.(e);
      await pause(500);
    }
  }
}
