import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDynamoStore } from '@stepfold/store-dynamo';
import { createMongoStore } from '@stepfold/store-mongo';
import { MongoClient } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../src/exit-codes.js';
import type { InstanceRow } from '../src/snapshot-view.js';
import { cli, EXAMPLES, parsed, uniqueName } from './cli.js';
import { seed } from './store-commands.js';

const MONGO_URL = process.env.STEPFOLD_MONGO_URL ?? 'mongodb://127.0.0.1:27017/stepfold';
const DYNAMO_ENDPOINT = process.env.STEPFOLD_DYNAMO_ENDPOINT ?? 'http://127.0.0.1:8000';

type Page = { items: InstanceRow[]; cursor: string | null };

describe('list on MongoDB (FerretDB)', () => {
  it('lists, filters by status and pages', async () => {
    const client = new MongoClient(MONGO_URL, { serverSelectionTimeoutMS: 5000 });
    const collection = uniqueName('mongo');
    const store = createMongoStore({ db: client.db(), collection });
    try {
      await store.setup();
      await seed(store);
      const url = new URL(MONGO_URL);
      url.searchParams.set('collection', collection);
      const all = parsed<Page>(await cli(['list', '--store', url.toString(), '--json']));
      expect(all.items).toHaveLength(7);
      const dlq = parsed<Page>(await cli(['list', '--store', url.toString(), '--status', 'dlq', '--json']));
      expect(dlq.items.map((i) => i.id)).toEqual(['exp-5']);
      const first = parsed<Page>(await cli(['list', '--store', url.toString(), '--limit', '5', '--json']));
      expect(first.items).toHaveLength(5);
      const rest = parsed<Page>(
        await cli(['list', '--store', url.toString(), '--limit', '5', '--cursor', first.cursor!, '--json']),
      );
      expect([...first.items, ...rest.items].map((i) => i.id)).toEqual(all.items.map((i) => i.id));
      const shown = await cli(['show', 'exp-5', '--store', url.toString(), '--json']);
      expect(parsed(shown).status).toBe('dlq');
      // The store's inbox takes it in one write: not applied yet (a worker will), the snapshot unchanged.
      const before = (await store.load('exp-4'))!;
      const sent = await cli([
        'send',
        'exp-4',
        'receipt',
        '--payload',
        '{"file":"m.pdf"}',
        '--store',
        url.toString(),
        '--definitions',
        EXAMPLES.dir,
        '--json',
      ]);
      expect(sent.code).toBe(EXIT.ok);
      expect(parsed(sent)).toMatchObject({ delivered: 'inbox', version: before.version });
      const [waiting] = await store.inbox!.claim(Date.now(), 10, ['exp-4']);
      expect(waiting?.sent.map((s) => s.event.type === 'signal' && s.event.payload)).toEqual([
        { file: 'm.pdf' },
      ]);
      expect((await store.load('exp-4'))?.version).toBe(before.version);
    } finally {
      await client
        .db()
        .collection(collection)
        .drop()
        .catch(() => {});
      await client.close();
    }
  });
});

describe('list on DynamoDB (moto)', () => {
  it('lists and filters by status and workflow', async () => {
    const client = new DynamoDBClient({
      region: 'us-east-1',
      endpoint: DYNAMO_ENDPOINT,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const table = uniqueName('dynamo');
    const store = createDynamoStore({ client, table });
    try {
      await store.setup();
      await seed(store);
      const url = `dynamodb://${new URL(DYNAMO_ENDPOINT).host}/${table}?region=us-east-1`;
      const all = parsed<Page>(await cli(['list', '--store', url, '--json']));
      expect(all.items.map((i) => i.id)).toEqual([
        'exp-1',
        'exp-2',
        'exp-3',
        'exp-4',
        'exp-5',
        'exp-6',
        'misc-1',
      ]);
      const waiting = parsed<Page>(
        await cli([
          'list',
          '--store',
          url,
          '--status',
          'waiting',
          '--workflow',
          'expense',
          '--prefix',
          'exp-',
          '--json',
        ]),
      );
      expect(waiting.items.map((i) => i.id)).toEqual(['exp-1', 'exp-2', 'exp-3', 'exp-4', 'exp-6']);
      const missing = await cli(['show', 'nope', '--store', url]);
      expect(missing.code).toBe(EXIT['not-found']);
    } finally {
      await client.send(new DeleteTableCommand({ TableName: table })).catch(() => {});
      client.destroy();
    }
  });
});
