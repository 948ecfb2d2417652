/**
 * Wake notices from the table's DynamoDB stream against the real server: a worker that polls
 * every 30 s runs what other runners wrote as soon as the stream says so, a subscription outlives
 * the server going away, and a table without a stream is refused at once.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { CreateTableCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import {
  createRunner,
  createWorker,
  defineWorkflow,
  isStepfoldError,
  type Store,
  type WakeNotice,
} from '@stepfold/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDynamoStore, tableDefinition } from '../src/index.js';
import { DYNAMO_ENDPOINT, requireServer, testClient, testStreamsClient } from './server.js';

const client = testClient();
const streams = testStreamsClient();
const tables: string[] = [];
let counter = 0;

function freshTable(): string {
  const name = `wakes_${process.pid}_${++counter}`;
  tables.push(name);
  return name;
}

beforeAll(() => requireServer(client));
afterAll(async () => {
  for (const TableName of tables) await client.send(new DeleteTableCommand({ TableName })).catch(() => {});
  client.destroy();
  streams.destroy();
});

async function until(what: string, probe: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The store's polls that look for due work unasked (no ids named): what finds work without a notice. */
function countingLanePolls(store: Store): { store: Store; lanePolls: () => number } {
  let polls = 0;
  const claims = store.claims!;
  const inbox = store.inbox!;
  const counted: Store = Object.assign(Object.create(store) as Store, {
    listDue: (...a: Parameters<Store['listDue']>) => {
      polls++;
      return store.listDue(...a);
    },
    claims: {
      ...claims,
      claimDue: (...a: Parameters<typeof claims.claimDue>) => {
        if (!a[2]?.ids) polls++;
        return claims.claimDue(...a);
      },
      release: claims.release.bind(claims),
    },
    inbox: {
      send: inbox.send.bind(inbox),
      drop: inbox.drop.bind(inbox),
      claim: (...a: Parameters<typeof inbox.claim>) => {
        if (!a[2]) polls++;
        return inbox.claim(...a);
      },
    },
  });
  return { store: counted, lanePolls: () => polls };
}

const signalled = defineWorkflow({
  name: 'stream-signal',
  version: 1,
  start: 'wait',
  steps: {
    wait: { kind: 'wait', signal: 'go', next: 'hit' },
    hit: { kind: 'task', handler: 'hit', input: { said: 'outputs.wait.said' } },
  },
});
const timed = defineWorkflow({
  name: 'stream-timer',
  version: 1,
  start: 'nap',
  steps: {
    nap: { kind: 'sleep', ms: 1_500, next: 'hit' },
    hit: { kind: 'task', handler: 'hit', input: { said: 'input.said' } },
  },
});

describe('DynamoDB wakes (streams)', () => {
  it('a worker polling every 30 s runs a sent signal and a timer of other runners as the stream announces them', async () => {
    const base = createDynamoStore({ client, table: freshTable(), streams: { client: streams } });
    await base.setup();
    const { store, lanePolls } = countingLanePolls(base);
    const ran: unknown[] = [];
    const runner = createRunner({
      store,
      workflows: [signalled, timed],
      handlers: { hit: ({ input }) => void ran.push(input) },
    });
    const slow = { minMs: 30_000, maxMs: 30_000, maxWithWakesMs: 30_000 };
    const worker = createWorker({ runner, poll: slow });
    await worker.start();
    const other = createRunner({ store: base, workflows: [signalled, timed], execute: false });
    try {
      // The first round's polls are done once the worker waits for its next one.
      await until('the first round', () => lanePolls() > 0);
      await new Promise((r) => setTimeout(r, 200));
      const after = lanePolls();
      await other.start('stream-signal', 's-1');
      await other.send('s-1', 'go', { said: 'sent' });
      await other.start('stream-timer', 't-1', { said: 'timer' });
      await until('both handlers', () => ran.length === 2);
      expect(ran).toEqual(expect.arrayContaining([{ said: 'sent' }, { said: 'timer' }]));
      // No poll looked for due work meanwhile: the stream's notices alone drove both.
      expect(lanePolls()).toBe(after);
      expect(worker.stats.wakes).toBeGreaterThanOrEqual(2);
      await until('both finished', async () => {
        const done = await Promise.all(['s-1', 't-1'].map((id) => base.load(id)));
        return done.every((s) => s?.status === 'completed');
      });
    } finally {
      await worker.stop();
      await base.close();
    }
  });

  it('a table without a stream: subscribe fails at once with NO_WAKE_STREAM; setup with streams enables it', async () => {
    const table = freshTable();
    await client.send(new CreateTableCommand(tableDefinition(table)));
    const store = createDynamoStore({ client, table, streams: { client: streams } });
    const refused = await store.wakes!.subscribe({ wake: () => {} }).catch((e: unknown) => e);
    expect(isStepfoldError(refused, 'NO_WAKE_STREAM')).toBe(true);
    await store.setup(); // UpdateTable: the stream on the existing table
    const seen: WakeNotice[] = [];
    const sub = await store.wakes!.subscribe({ wake: (n) => seen.push(n) });
    try {
      const api = createRunner({ store, workflows: [timed], execute: false });
      const s = await api.start('stream-timer', 'late-1', { said: 'x' });
      await until('the notice', () => seen.some((n) => n.id === 'late-1'));
      expect(seen.find((n) => n.id === 'late-1')).toEqual({
        at: s.wakeAt,
        workflow: 'stream-timer',
        id: 'late-1',
      });
    } finally {
      await sub.close();
    }
  });
});

/** A TCP proxy to the server that can be cut and restored: the server going away, from the client's side. */
async function proxy(target: URL): Promise<{ url: string; cut(): Promise<void>; restore(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let port = 0;
  let server: Server | undefined;
  const start = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((inbound) => {
        sockets.add(inbound);
        const outbound = connect(Number(target.port), target.hostname);
        sockets.add(outbound);
        inbound.pipe(outbound).pipe(inbound);
        const drop = () => {
          inbound.destroy();
          outbound.destroy();
        };
        inbound.on('error', drop).on('close', drop);
        outbound.on('error', drop).on('close', drop);
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as { port: number }).port;
        server = s;
        resolve();
      });
    });
  await start();
  return {
    url: `http://127.0.0.1:${port}`,
    async cut() {
      const s = server;
      server = undefined;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      if (s) await new Promise((r) => s.close(r));
    },
    restore: start,
  };
}

describe('DynamoDB wakes (streams): outage', () => {
  it('the subscription survives the server going away and back: lost, restored, then notices again', async () => {
    const table = freshTable();
    const setupStore = createDynamoStore({ client, table, streams: { client: streams } });
    await setupStore.setup();
    const line = await proxy(new URL(DYNAMO_ENDPOINT));
    const viaProxy = testClient(line.url);
    const streamsViaProxy = testStreamsClient(line.url);
    const store = createDynamoStore({
      client: viaProxy,
      table,
      streams: { client: streamsViaProxy, backoff: { firstMs: 50, maxMs: 200, factor: 2, jitter: 0 } },
    });
    const events: string[] = [];
    const seen: WakeNotice[] = [];
    const sub = await store.wakes!.subscribe({
      wake: (n) => seen.push(n),
      lost: () => events.push('lost'),
      restored: () => events.push('restored'),
    });
    try {
      await line.cut();
      await until('lost', () => events.includes('lost'));
      await line.restore();
      await until('restored', () => events.includes('restored'));
      expect(events).toEqual(['lost', 'restored']);
      // Written through another client after the return: the stream is read again.
      const api = createRunner({ store: setupStore, workflows: [timed], execute: false });
      await api.start('stream-timer', 'back-1', { said: 'x' });
      await until('the notice after the return', () => seen.some((n) => n.id === 'back-1'));
    } finally {
      await sub.close();
      await line.cut();
      viaProxy.destroy();
      streamsViaProxy.destroy();
    }
  });
});
