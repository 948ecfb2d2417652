/**
 * The stream reader's shard bookkeeping, on a scripted stream (no server can roll a shard over on
 * demand): shards open at the start are read from LATEST, a shard that ends is replaced by the
 * shards after it, read from their start, and a table without a usable stream is refused.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { isStepfoldError } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { openStreamReader, type StreamReader } from '../src/index.js';

interface Scripted {
  shards: Array<{
    ShardId: string;
    ParentShardId?: string;
    SequenceNumberRange?: { EndingSequenceNumber?: string };
  }>;
  /** Pages per shard, in order; the last page of an ended shard has no next iterator. */
  pages: Record<string, Array<{ keys: string[]; last?: boolean }>>;
}

function fakes(script: Scripted, spec: { StreamEnabled: boolean; StreamViewType?: string } | undefined) {
  const asked: string[] = [];
  const table = {
    send: async () => ({
      Table: {
        TableName: 't',
        ...(spec ? { StreamSpecification: spec, LatestStreamArn: 'arn:stream' } : {}),
      },
    }),
  } as unknown as DynamoDBClient;
  const streams = {
    async send(command: { constructor: { name: string }; input: Record<string, string> }) {
      const input = command.input;
      switch (command.constructor.name) {
        case 'DescribeStreamCommand':
          return { StreamDescription: { Shards: script.shards } };
        case 'GetShardIteratorCommand':
          asked.push(`${input['ShardId']}@${input['ShardIteratorType']}`);
          return { ShardIterator: `${input['ShardId']}#0` };
        case 'GetRecordsCommand': {
          const [shard, n] = input['ShardIterator']!.split('#') as [string, string];
          const page = script.pages[shard]?.[Number(n)] ?? { keys: [] };
          return {
            Records: page.keys.map((id) => ({ dynamodb: { Keys: { id: { S: id } } } })),
            ...(page.last ? {} : { NextShardIterator: `${shard}#${Number(n) + 1}` }),
          };
        }
        default:
          throw new Error(`unexpected ${command.constructor.name}`);
      }
    },
  } as unknown as DynamoDBStreamsClient;
  return { table, streams, asked };
}

const ids = (records: Awaited<ReturnType<StreamReader['read']>>) =>
  records.map((r) => r.dynamodb?.Keys?.['id']?.S);

describe('stream reader', () => {
  it('reads open shards from LATEST; an ended shard gives way to its children, read from their start', async () => {
    const script: Scripted = {
      shards: [
        { ShardId: 'old', SequenceNumberRange: { EndingSequenceNumber: '9' } },
        { ShardId: 'a', ParentShardId: 'old' },
      ],
      pages: { a: [{ keys: ['1'] }, { keys: ['2'], last: true }], b: [{ keys: ['3'] }, { keys: [] }] },
    };
    const { table, streams, asked } = fakes(script, { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' });
    const reader = await openStreamReader({ client: table, streams, table: 't' });
    expect(asked).toEqual(['a@LATEST']); // the closed shard holds only older records
    expect(ids(await reader.read())).toEqual(['1']);
    // `a` ends with this page; its child has appeared meanwhile.
    script.shards.push({ ShardId: 'b', ParentShardId: 'a' });
    expect(ids(await reader.read())).toEqual(['2']);
    expect(asked).toEqual(['a@LATEST', 'b@TRIM_HORIZON']);
    expect(reader.shards).toBe(1);
    expect(ids(await reader.read())).toEqual(['3']);
    expect(ids(await reader.read())).toEqual([]);
  });

  it('a table without a stream, or with one of keys only, is NO_WAKE_STREAM', async () => {
    for (const spec of [undefined, { StreamEnabled: true, StreamViewType: 'KEYS_ONLY' }]) {
      const { table, streams } = fakes({ shards: [], pages: {} }, spec);
      const e = await openStreamReader({ client: table, streams, table: 't' }).catch((x: unknown) => x);
      expect(isStepfoldError(e, 'NO_WAKE_STREAM')).toBe(true);
    }
  });
});
