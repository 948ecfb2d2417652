import { makeTestSnapshot } from '@stepfold/engine';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropPrefix, openStore, requireServer, type TestStore, testClient } from './server.js';
import { until } from './wake-probe.js';

const client = testClient();
const opened: TestStore[] = [];
const monitors: Redis[] = [];

beforeAll(() => requireServer(client));
afterAll(async () => {
  for (const m of monitors) m.disconnect();
  for (const t of opened) await dropPrefix(client, t.prefix);
  client.disconnect();
});

/** Records, via MONITOR, the commands that name a key under `prefix`: the name, and `lua` when a script ran it. */
async function watch(prefix: string) {
  const monitor = await client.monitor();
  monitors.push(monitor);
  const seen: Array<{ command: string; lua: boolean }> = [];
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (args.some((a) => a.includes(prefix)))
      seen.push({ command: args[0]!.toLowerCase(), lua: source === 'lua' });
  });
  return seen;
}

/**
 * The calls the client itself sent, less an EVAL: one follows an EVALSHA only when the server
 * answered NOSCRIPT (another test file's SCRIPT FLUSH), and runs that same script once.
 */
const sent = (seen: Array<{ command: string; lua: boolean }>) =>
  seen.filter((c) => !c.lua && c.command !== 'eval').map((c) => c.command);

describe('redis adapter: the inbox', () => {
  const signal = (n: number) => ({ type: 'signal', name: 'go', payload: { n }, at: n }) as const;
  const accept = ['conformance@1@conformance-hash'];

  it('a send is one script run: the seq, the append, its poll time and its notice are written inside it', async () => {
    const t = openStore(client, 'send-once');
    opened.push(t);
    await t.store.setup();
    await t.store.create(makeTestSnapshot('s-1', { status: 'waiting' }));
    const seen = await watch(t.prefix);
    expect(await t.store.inbox.send('s-1', signal(1), accept)).toBe(true);
    await until(() => seen.some((c) => c.command === 'publish'), 'the notice');
    expect(sent(seen)).toEqual(['evalsha']);
    const writes = seen.filter((c) => ['incr', 'hset', 'zadd', 'publish'].includes(c.command));
    expect(writes.map((c) => c.command)).toEqual(['incr', 'hset', 'zadd', 'publish']);
    expect(writes.every((c) => c.lua)).toBe(true);
    // Refused (a definition not accepted): nothing written, still one run.
    seen.length = 0;
    expect(await t.store.inbox.send('s-1', signal(2), ['other@1@h'])).toBe(false);
    await until(() => seen.length > 0, 'the refused send');
    await new Promise((r) => setTimeout(r, 100));
    expect(seen.filter((c) => c.lua && c.command !== 'hmget')).toEqual([]);
  });

  it('a send refused for a finished instance answers its status from the same script run', async () => {
    const t = openStore(client, 'send-finished');
    opened.push(t);
    await t.store.setup();
    await t.store.create(makeTestSnapshot('f-1', { status: 'completed' }));
    const seen = await watch(t.prefix);
    expect(await t.store.inbox.send('f-1', signal(1), accept)).toBe('completed');
    // Another definition, or no instance: refused without a reason.
    expect(await t.store.inbox.send('f-1', signal(2), ['other@1@h'])).toBe(false);
    expect(await t.store.inbox.send('f-2', signal(3), accept)).toBe(false);
    await until(() => seen.filter((c) => c.command === 'hmget').length === 3, 'the three runs');
    await new Promise((r) => setTimeout(r, 100));
    expect(sent(seen)).toEqual(['evalsha', 'evalsha', 'evalsha']);
    expect(seen.filter((c) => c.lua && c.command !== 'hmget')).toEqual([]);
  });

  it('a save consumes the signals it applied inside its own script run', async () => {
    const t = openStore(client, 'consume-once');
    opened.push(t);
    await t.store.setup();
    const stored = makeTestSnapshot('c-1', { status: 'waiting' });
    await t.store.create(stored);
    for (const n of [1, 2, 3]) await t.store.inbox.send('c-1', signal(n), accept);
    const [due] = await t.store.inbox.claim(0, 1, ['c-1']);
    expect(due?.sent.map((s) => s.event)).toEqual([signal(1), signal(2), signal(3)]);
    const seen = await watch(t.prefix);
    await t.store.save({ ...stored, version: 2 }, 1, { consumed: due!.sent.slice(0, 2) });
    await until(() => seen.some((c) => c.command === 'hdel'), 'the consumption');
    expect(sent(seen)).toEqual(['evalsha']);
    expect(seen.filter((c) => c.command === 'hdel').every((c) => c.lua)).toBe(true);
    const [left] = await t.store.inbox.claim(0, 1, ['c-1']);
    expect(left?.sent.map((s) => s.event)).toEqual([signal(3)]);
  });

  it('a poll claims an instance’s signals for the lease, with every signal waiting, oldest first', async () => {
    const t = openStore(client, 'inbox-lease', { claimMs: 1000 });
    opened.push(t);
    for (const id of ['l-1', 'l-2']) await t.store.create(makeTestSnapshot(id, { status: 'waiting' }));
    for (const n of [10, 20]) await t.store.inbox.send('l-1', signal(n), accept);
    await t.store.inbox.send('l-2', signal(15), accept);
    // A poll's due time: a second after the instance's first signal.
    expect(await t.store.inbox.claim(1009, 10)).toEqual([]);
    const first = await t.store.inbox.claim(1010, 1);
    expect(first.map((d) => [d.snapshot.id, d.sent.map((s) => s.event.at)])).toEqual([['l-1', [10, 20]]]);
    expect((await t.store.inbox.claim(1020, 10)).map((d) => d.snapshot.id)).toEqual(['l-2']);
    // Leased until 2010 and 2020 (the poll's now plus claimMs); by id, at once whatever the lease.
    expect(await t.store.inbox.claim(2009, 10)).toEqual([]);
    expect((await t.store.inbox.claim(2010, 10)).map((d) => d.snapshot.id)).toEqual(['l-1']);
    expect((await t.store.inbox.claim(0, 10, ['l-2', 'l-3'])).map((d) => d.snapshot.id)).toEqual(['l-2']);
  });
});
