import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBStreamsClient, Shard, ShardIteratorType } from '@aws-sdk/client-dynamodb-streams';
import { isWakeStream } from './setup.js';
import type { StreamRecord, StreamsClient } from './stream-client.js';
import { WakeStreamError } from './wake-stream-error.js';

/** The streams SDK, loaded when a reader opens: an optional peer dependency of the store. */
type StreamsSdk = typeof import('@aws-sdk/client-dynamodb-streams');

/** Options of {@link openStreamReader}. */
export interface StreamReaderOptions {
  /** The table's client (DescribeTable finds its stream). */
  client: DynamoDBClient;
  /** A DynamoDB Streams client for the same account, region and endpoint. */
  streams: StreamsClient;
  table: string;
  /** Where to start in each shard open now: `LATEST` (default) or `TRIM_HORIZON` (the last 24 h). */
  from?: 'LATEST' | 'TRIM_HORIZON' | undefined;
  /** Aborts the request in flight (a closing subscription). */
  signal?: AbortSignal | undefined;
}

export type { StreamRecord, StreamsClient };

/** One pass over a table's stream: the records each shard had, oldest first within a shard. */
export interface StreamReader {
  /** The stream read (its ARN). */
  readonly arn: string;
  /** Shards being read now. */
  readonly shards: number;
  /** One GetRecords per shard being read; a shard that ended is replaced by the shards after it. */
  read(): Promise<StreamRecord[]>;
}

let sdk: Promise<StreamsSdk> | undefined;

/** Loads `@aws-sdk/client-dynamodb-streams` once, saying what to install when it is missing. */
function loadSdk(): Promise<StreamsSdk> {
  sdk ??= import('@aws-sdk/client-dynamodb-streams').catch((e: unknown) => {
    sdk = undefined;
    throw new Error('DynamoDB wakes need @aws-sdk/client-dynamodb-streams installed', { cause: e });
  });
  return sdk;
}

/**
 * Opens the table's stream (DescribeTable, then DescribeStream for its shards) and an iterator on
 * every open shard, from `from`. Each {@link StreamReader.read} is one GetRecords per shard; a
 * shard with no next iterator has ended (DynamoDB rolls shards over every few hours and splits
 * them with the table's partitions): the stream is described again and the shards not seen
 * before are read from their start, so no record after the open is skipped. A table without a
 * stream of new images: {@link WakeStreamError} (`NO_WAKE_STREAM`).
 */
export async function openStreamReader(o: StreamReaderOptions): Promise<StreamReader> {
  const api = await loadSdk();
  // Typed as the SDK's client inside: the public options take any client that sends its commands.
  const streams = o.streams as DynamoDBStreamsClient;
  const opts = o.signal ? { abortSignal: o.signal } : {};
  const described = await o.client.send(new DescribeTableCommand({ TableName: o.table }), opts);
  const arn = described.Table?.LatestStreamArn;
  if (!isWakeStream(described.Table?.StreamSpecification) || arn === undefined)
    throw WakeStreamError.viewType(o.table, described.Table);

  const listShards = async (): Promise<Shard[]> => {
    const all: Shard[] = [];
    let start: string | undefined;
    do {
      const out = await streams.send(
        new api.DescribeStreamCommand({ StreamArn: arn, ExclusiveStartShardId: start }),
        opts,
      );
      all.push(...(out.StreamDescription?.Shards ?? []));
      start = out.StreamDescription?.LastEvaluatedShardId;
    } while (start);
    return all;
  };
  const iterator = async (shard: string, type: ShardIteratorType): Promise<string | undefined> => {
    const out = await streams.send(
      new api.GetShardIteratorCommand({ StreamArn: arn, ShardId: shard, ShardIteratorType: type }),
      opts,
    );
    return out.ShardIterator;
  };

  // Every shard seen (read, ended or closed at the open) and the iterators of those being read.
  const seen = new Set<string>();
  const reading = new Map<string, string>();
  for (const shard of await listShards()) {
    const id = shard.ShardId!;
    seen.add(id);
    // A closed shard holds only records from before the open.
    if (shard.SequenceNumberRange?.EndingSequenceNumber !== undefined) continue;
    const it = await iterator(id, o.from ?? 'LATEST');
    if (it) reading.set(id, it);
  }

  const rediscover = async () => {
    for (const shard of await listShards()) {
      const id = shard.ShardId!;
      if (seen.has(id)) continue;
      seen.add(id);
      // New since the open: all of it is news.
      const it = await iterator(id, 'TRIM_HORIZON');
      if (it) reading.set(id, it);
    }
  };

  return {
    arn,
    get shards() {
      return reading.size;
    },
    async read() {
      // The shards side by side: a large table's stream has many.
      const pages = await Promise.all(
        [...reading].map(async ([shard, it]) => {
          const out = await streams.send(new api.GetRecordsCommand({ ShardIterator: it }), opts);
          if (out.NextShardIterator) reading.set(shard, out.NextShardIterator);
          else reading.delete(shard);
          return { records: (out.Records ?? []) as StreamRecord[], ended: !out.NextShardIterator };
        }),
      );
      const records = pages.flatMap((p) => p.records);
      // A shard ended (or none was open yet, as while a new stream is being enabled): look again.
      if (reading.size === 0 || pages.some((p) => p.ended)) await rediscover();
      return records;
    },
  };
}
