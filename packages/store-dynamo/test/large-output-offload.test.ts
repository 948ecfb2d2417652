import { createHash } from 'node:crypto';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { createRunner, defineWorkflow, isPayloadRef, offloading, type PayloadRef } from '@stepfold/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoPayloadStore, createDynamoStore } from '../src/index.js';
import { requireServer, testClient } from './server.js';

// A task returns 2 MB on DynamoDB (400 KB items): the output is offloaded, the next
// step reads it, the snapshot stays under 400 KB.

const client = testClient();
const table = `large_output_${process.pid}`;
const store = createDynamoStore({ client, table, setup: { pollMs: 50 } });
// The payloads live in DynamoDB too, in their own table: a 2 MB body is split into items under 400 KB.
const payloadTable = `large_output_payloads_${process.pid}`;
const payloads = createDynamoPayloadStore({ client, table: payloadTable, setup: { pollMs: 50 } });

beforeAll(async () => {
  await requireServer(client);
  await store.setup();
  await payloads.setup();
});
afterAll(async () => {
  await payloads.close();
  for (const TableName of [table, payloadTable])
    await client.send(new DeleteTableCommand({ TableName })).catch(() => {});
  client.destroy();
});

/** 2 MB of rows, each different (a hash of the whole is what the next step must reproduce). */
function bigReport(): { status: string; rows: string[] } {
  const rows: string[] = [];
  for (let i = 0; rows.length * 100 < 2 * 1024 * 1024; i++)
    rows.push(`${String(i).padStart(8, '0')}:${'r'.repeat(91)}`);
  return { status: 'ok', rows };
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

const reportFlow = defineWorkflow({
  name: 'report',
  version: 1,
  start: 'build',
  steps: {
    build: { kind: 'task', handler: 'build', offload: { keep: ['status'] }, next: 'check' },
    check: {
      kind: 'choice',
      branches: [{ when: { '==': [{ var: 'outputs.build.status' }, 'ok'] }, next: 'digest' }],
    },
    digest: { kind: 'task', handler: 'digest', input: 'outputs.build' },
  },
});

describe('a 2 MB output on DynamoDB is offloaded', () => {
  it('is offloaded, read whole by the next step, and the snapshot stays under 400 KB', async () => {
    const report = bigReport();
    const json = JSON.stringify(report);
    expect(json.length).toBeGreaterThan(2 * 1024 * 1024);
    const runner = createRunner({
      store,
      workflows: [reportFlow],
      payloads: offloading({ store: payloads }),
      handlers: {
        build: async () => report,
        digest: async ({ input }) => {
          const got = input as { rows: string[] };
          return { rows: got.rows.length, sha256: sha(JSON.stringify(input)), sample: got.rows[12_345] };
        },
      },
    });
    const done = await runner.start('report', 'report-1');
    expect(done.status).toBe('completed');
    // The next step got every byte: same hash, same count, same row in the middle.
    expect(done.output).toEqual({ rows: report.rows.length, sha256: sha(json), sample: report.rows[12_345] });
    const stored = await store.load('report-1');
    expect(JSON.stringify(stored).length).toBeLessThan(400_000);
    const ref = stored!.steps['build']!.output as PayloadRef;
    expect(isPayloadRef(ref)).toBe(true);
    expect(ref).toMatchObject({ owner: 'report-1', sha256: sha(json), keep: { status: 'ok' } });
    expect(await payloads.get('report-1', ref.sha256)).toBe(json);
    expect((await runner.get('report-1'))!.steps['build']!.output).toEqual(report);
  });
});
