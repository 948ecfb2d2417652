import {
  createRunner,
  createWorker,
  defineWorkflow,
  type InboxSendOutcome,
  makeTestSnapshot,
  type SaveOptions,
  type SentDue,
  type Snapshot,
  type Store,
  type WorkflowEvent,
} from '@stepfold/engine';
import { type CommandStartedEvent, MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMongoStore, type InstanceDocument } from '../src/index.js';
import { MONGO_URL, requireServer } from './server.js';

// What the inbox writes and sends, seen from the server side: the documents and the commands.
const client = new MongoClient(MONGO_URL, { serverSelectionTimeoutMS: 1500, monitorCommands: true });
const db = client.db('stepfold_test');
const names: string[] = [];
const fresh = (tag: string) => {
  const collection = `inbox_${tag}_${process.pid}`;
  names.push(collection);
  return { store: createMongoStore({ db, collection }), docs: db.collection<InstanceDocument>(collection) };
};

/** The commands `fn` sends (their names, and for updates how many statements each carries). */
async function commandsOf(fn: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const listen = (e: CommandStartedEvent) => {
    const updates = e.command.updates as unknown[] | undefined;
    seen.push(updates ? `${e.commandName}×${updates.length}` : e.commandName);
  };
  client.on('commandStarted', listen);
  try {
    await fn();
  } finally {
    client.off('commandStarted', listen);
  }
  return seen;
}

beforeAll(() => requireServer(client));
afterAll(async () => {
  for (const name of names) await db.dropCollection(name).catch(() => {});
  await client.close();
});

const WF = { name: 'wf', version: 1, hash: 'h' };
const ACCEPT = ['wf@1@h'];
const instance = (id: string, patch: Partial<Snapshot> = {}) =>
  makeTestSnapshot(id, { workflow: WF, status: 'waiting', ...patch });
const signal = (at: number, payload: unknown): WorkflowEvent => ({ type: 'signal', at, name: 'go', payload });
const payloads = (due: SentDue | undefined) =>
  due?.sent.map((s) => (s.event as { payload?: unknown }).payload);

describe('mongo inbox', () => {
  it('a send is one conditional updateOne into the instance document; a save leaves the inbox alone', async () => {
    const { store, docs } = fresh('one');
    await store.setup();
    await store.create(instance('one-1'));
    const sent = signal(5_000, { n: 1 });
    expect(await commandsOf(() => store.inbox!.send('one-1', sent, ACCEPT))).toEqual(['update×1']);
    const doc = await docs.findOne({ _id: 'one-1' });
    const entries = Object.entries(doc?.sent ?? {});
    expect(entries).toHaveLength(1);
    expect(entries[0]![0]).toMatch(/^k\d+$/);
    expect(entries[0]![1]).toEqual({ e: JSON.stringify(sent), d: 6_000 }); // its second for the notice
    expect(doc?.sentDueAt).toBe(6_000);

    // A save that applied nothing rewrites only its own fields.
    await store.save(instance('one-1', { version: 2 }), 1);
    expect((await docs.findOne({ _id: 'one-1' }))?.sent).toEqual(doc?.sent);

    // Refused in the same one command, writing nothing: another definition, a finished instance, none.
    await store.create(instance('one-2', { status: 'completed' }));
    for (const [id, accept] of [
      ['one-1', ['wf@2@h']],
      ['one-2', ACCEPT],
      ['one-none', ACCEPT],
    ] as const) {
      let ok: InboxSendOutcome | undefined;
      const commands = await commandsOf(async () => {
        ok = await store.inbox!.send(id, sent, accept);
      });
      expect([id, ok, commands]).toEqual([id, false, ['update×1']]);
    }
    expect((await docs.findOne({ _id: 'one-2' }))?.sent).toBeUndefined();
  });

  it('lists signals oldest first whatever their seqs; a consuming save removes exactly those in its one updateOne', async () => {
    const { store, docs } = fresh('order');
    await store.setup();
    await store.create(instance('ord-1'));
    for (let i = 0; i < 6; i++)
      expect(await store.inbox!.send('ord-1', signal(1_000 + i, i), ACCEPT)).toBe(true);
    const [due] = await store.inbox!.claim(0, 1, ['ord-1']);
    expect(payloads(due)).toEqual([0, 1, 2, 3, 4, 5]);
    // Random seqs, unique in the document: the order is the field order, not the numbers.
    expect(new Set(due?.sent.map((s) => s.seq)).size).toBe(6);

    const consumed = due!.sent.slice(0, 2);
    expect(await commandsOf(() => store.save(instance('ord-1', { version: 2 }), 1, { consumed }))).toEqual([
      'update×1',
    ]);
    const [left] = await store.inbox!.claim(0, 1, ['ord-1']);
    expect(payloads(left)).toEqual([2, 3, 4, 5]);
    // A send after the removals still lands last.
    await store.inbox!.send('ord-1', signal(2_000, 6), ACCEPT);
    const [after] = await store.inbox!.claim(0, 1, ['ord-1']);
    expect(payloads(after)).toEqual([2, 3, 4, 5, 6]);

    // drop: only at the version it names.
    const seqs = after!.sent.slice(0, 1).map((s) => s.seq);
    await store.inbox!.drop('ord-1', seqs, 1);
    expect(Object.keys((await docs.findOne({ _id: 'ord-1' }))?.sent ?? {})).toHaveLength(5);
    await store.inbox!.drop('ord-1', seqs, 2);
    expect(Object.keys((await docs.findOne({ _id: 'ord-1' }))?.sent ?? {})).toHaveLength(4);
  });

  it('the inbox claim moves sentDueAt to its end; a later send brings it back; an emptied inbox leaves the range', async () => {
    const { store, docs } = fresh('claim');
    await store.setup();
    await store.create(instance('cl-1'));
    await store.inbox!.send('cl-1', signal(1_000, 'a'), ACCEPT);
    expect(await store.inbox!.claim(1_999, 10)).toEqual([]);
    const [got] = await store.inbox!.claim(2_000, 10);
    expect(payloads(got)).toEqual(['a']);
    const claimed = await docs.findOne({ _id: 'cl-1' });
    expect(claimed?.sentDueAt).toBe(2_000 + store.claimMs);
    expect(typeof claimed?.sentClaim).toBe('string');
    expect(await store.inbox!.claim(2_000, 10)).toEqual([]);

    // A signal sent while claimed is due at its own time, with every signal still waiting.
    await store.inbox!.send('cl-1', signal(3_000, 'b'), ACCEPT);
    expect((await docs.findOne({ _id: 'cl-1' }))?.sentDueAt).toBe(4_000);
    const [again] = await store.inbox!.claim(4_000, 10);
    expect(payloads(again)).toEqual(['a', 'b']);

    // All applied: the next claim past the lease finds the document empty and takes it out of range.
    await store.save(instance('cl-1', { version: 2 }), 1, { consumed: again!.sent });
    expect((await docs.findOne({ _id: 'cl-1' }))?.sent).toEqual({});
    expect(await store.inbox!.claim(100_000, 10)).toEqual([]);
    const idle = await docs.findOne({ _id: 'cl-1' });
    expect(idle?.sentDueAt).toBeUndefined();
    expect(idle?.sentClaim).toBeUndefined();
  });

  it('a save matching a notice compares the snapshot and each consumed event text, in order', async () => {
    const { store } = fresh('match');
    await store.setup();
    const stored = instance('m-1');
    await store.create(stored);
    for (const p of ['x', 'y']) await store.inbox!.send('m-1', signal(1_000, p), ACCEPT);
    const [due] = await store.inbox!.claim(0, 1, ['m-1']);
    const [x, y] = due!.sent;
    const next = instance('m-1', { version: 2 });
    const swapped = [
      { seq: x!.seq, event: y!.event },
      { seq: y!.seq, event: x!.event },
    ];
    await expect(store.save(next, 1, { consumed: swapped, matches: stored })).rejects.toMatchObject({
      code: 'NOTICE_MISMATCH',
    });
    await expect(
      store.save(next, 1, { consumed: due!.sent, matches: { ...stored, input: 'forged' } }),
    ).rejects.toMatchObject({ code: 'NOTICE_MISMATCH' });
    expect((await store.inbox!.claim(0, 1, ['m-1']))[0]?.sent).toHaveLength(2);
    await store.save(next, 1, { consumed: due!.sent, matches: stored });
    expect(await store.inbox!.claim(0, 1, ['m-1'])).toEqual([]);
    expect((await store.load('m-1'))?.version).toBe(2);
  });

  it('documents from the version before the inbox: setup adds its index; sends are refused until a save', async () => {
    const { store, docs } = fresh('legacy');
    const s = instance('legacy-1', { wakeAt: 7 });
    // As the previous version wrote it: no definition, no inbox fields, a claim with its own token.
    await docs.createIndex({ dueAt: 1, _id: 1 }, { name: 'stepfold_due' });
    await docs.insertOne({
      _id: s.id,
      version: 1,
      status: s.status,
      workflow: 'wf',
      wakeAt: 7,
      dueAt: 30_000,
      claimedUntil: 30_000,
      claimToken: 'a-uuid-of-the-old-version',
      snapshot: JSON.stringify(s),
    });
    await store.setup();
    expect((await docs.indexes()).map((i) => i.name)).toContain('stepfold_sent_due');
    expect(await store.inbox!.send('legacy-1', signal(1_000, 'early'), ACCEPT)).toBe(false);
    // Its old claim is nobody's now: no release ends it; it lapses.
    await store.claims!.release(['legacy-1']);
    expect(await store.listDue(29_999, 10)).toEqual([]);
    expect(await store.listDue(30_000, 10)).toEqual(['legacy-1']);
    await store.save(instance('legacy-1', { version: 2 }), 1);
    expect((await docs.findOne({ _id: 'legacy-1' }))?.definition).toBe('wf@1@h');
    expect(await store.inbox!.send('legacy-1', signal(1_000, 'late'), ACCEPT)).toBe(true);
  });

  it('delete removes the inbox with the instance', async () => {
    const { store } = fresh('delete');
    await store.setup();
    await store.create(instance('del-1'));
    await store.inbox!.send('del-1', signal(1_000, 1), ACCEPT);
    expect(await store.delete('del-1')).toBe(true);
    await store.create(instance('del-1'));
    expect(await store.inbox!.claim(0, 1, ['del-1'])).toEqual([]);
    expect(await store.inbox!.claim(1e9, 10)).toEqual([]);
  });

  // The conformance test of this race waits for a wake notice, which a polling store never sends:
  // here the worker's inbox lane finds the signal instead, and the race plays out the same.
  it('a polling worker whose consuming write loses its race claims the signals again by id', async () => {
    const { store } = fresh('race');
    await store.setup();
    const batches = defineWorkflow({
      name: 'batches',
      version: 1,
      start: 'gather',
      steps: {
        gather: { kind: 'collect', signal: 'item', maxItems: 2, next: 'hit' },
        hit: { kind: 'task', handler: 'hit', input: { said: 'outputs.gather' } },
      },
    });
    const sender = createRunner({
      store,
      workflows: [batches],
      handlers: { hit: () => null },
      execute: false,
    });
    await sender.start('batches', 'r');
    let raced = false;
    const racing = Object.create(store) as Store;
    Object.defineProperty(racing, 'save', {
      value: async (snapshot: Snapshot, expected: number, o?: SaveOptions) => {
        if (o?.consumed?.length && !raced) {
          raced = true;
          await sender.signal('r', 'item', 'direct'); // lands just before the consuming write
        }
        return store.save(snapshot, expected, o);
      },
    });
    const ran: unknown[] = [];
    const runner = createRunner({
      store: racing,
      workflows: [batches],
      handlers: {
        hit: ({ input }) => {
          ran.push(input);
          return null;
        },
      },
    });
    const worker = createWorker({ runner, poll: { minMs: 50, maxMs: 200 } });
    await worker.start();
    try {
      await sender.send('r', 'item', 'sent');
      for (const end = Date.now() + 15_000; ran.length === 0 && Date.now() < end; )
        await new Promise((r) => setTimeout(r, 20));
      expect(raced).toBe(true);
      expect(ran).toEqual([{ said: ['direct', 'sent'] }]);
      expect(await store.inbox!.claim(0, 1, ['r'])).toEqual([]);
      expect(worker.stats.lostTakes).toBe(0);
    } finally {
      await worker.stop({ graceMs: 1000 });
    }
  });
});
