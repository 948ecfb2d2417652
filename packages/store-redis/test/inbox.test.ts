import { makeTestSnapshot } from '@stepfold/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAIM_SENT } from '../src/inbox-scripts.js';
import { keysFor } from '../src/index.js';
import { runScript } from '../src/scripts.js';
import { type Monitor, monitor } from './monitor.js';
import { dropPrefix, openStore, requireServer, type TestStore, testClient } from './server.js';
import { until } from './wake-probe.js';

const client = testClient();
const opened: TestStore[] = [];
const monitors: Monitor[] = [];

beforeAll(() => requireServer(client));
afterAll(async () => {
  for (const m of monitors) m.close();
  for (const t of opened) await dropPrefix(client, t.prefix);
  client.disconnect();
});

/** Records, via MONITOR, the commands that name a key under `prefix`: the name, and `lua` when a script ran it. */
async function watch(prefix: string) {
  const seen: Array<{ command: string; lua: boolean }> = [];
  const m = await monitor(({ args, lua }) => {
    if (args.some((a) => a.includes(prefix))) seen.push({ command: args[0]!.toLowerCase(), lua });
  });
  monitors.push(m);
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

  it('300 instances leased at the head: a poll of 2 reads 2 entries and gets the unleased ones behind them', async () => {
    const t = openStore(client, 'inbox-clog', { claimMs: 60_000 });
    opened.push(t);
    const keys = keysFor(t.prefix);
    const head = Array.from({ length: 300 }, (_, i) => `h-${String(i).padStart(3, '0')}`);
    const free = ['u-1', 'u-2', 'u-3'];
    for (const id of [...head, ...free]) await t.store.create(makeTestSnapshot(id, { status: 'waiting' }));
    for (const [i, id] of head.entries()) await t.store.inbox.send(id, signal(i), accept);
    for (const [i, id] of free.entries()) await t.store.inbox.send(id, signal(500 + i), accept);
    const leased = await t.store.inbox.claim(2000, 300);
    expect(leased.map((d) => d.snapshot.id).sort()).toEqual(head);
    // The script reports the entries it read: the two asked for, not 300 leased ones first.
    const args = ['3000', 2, '63000', 1000, keys.prefix];
    const reply = (await runScript(client, CLAIM_SENT, [keys.sentDue, keys.sentClaims], args)) as [
      number,
      Array<[string]>,
    ];
    expect(reply[0]).toBe(2);
    expect(reply[1].map(([id]) => id)).toEqual(['u-1', 'u-2']);
    expect((await t.store.inbox.claim(3000, 10)).map((d) => d.snapshot.id)).toEqual(['u-3']);
    expect(await t.store.inbox.claim(3000, 10)).toEqual([]);
    // Leased until 62,000: then due again, in the order the leases lapse.
    expect(await t.store.inbox.claim(61_999, 10)).toEqual([]);
    expect((await t.store.inbox.claim(62_000, 400)).map((d) => d.snapshot.id).sort()).toEqual(head);
  });

  it('an older version’s live inbox lease is honoured once, then its entry sits at the lease’s expiry', async () => {
    const t = openStore(client, 'inbox-old-lease', { claimMs: 10_000 });
    opened.push(t);
    const keys = keysFor(t.prefix);
    for (const id of ['o-1', 'o-2', 'o-3']) await t.store.create(makeTestSnapshot(id, { status: 'waiting' }));
    for (const [i, id] of ['o-1', 'o-2', 'o-3'].entries()) await t.store.inbox.send(id, signal(i), accept);
    // As an older adapter leased them: the entries left at their due time, the leases in sent-claims.
    await client.zadd(keys.sentClaims, 5000, 'o-1', 10, 'o-2');
    expect((await t.store.inbox.claim(2000, 10)).map((d) => d.snapshot.id)).toEqual(['o-2', 'o-3']);
    expect(await client.zscore(keys.sentDue, 'o-1')).toBe('5000');
    expect(await client.exists(keys.sentClaims)).toBe(0);
    expect(await t.store.inbox.claim(4999, 10)).toEqual([]);
    expect((await t.store.inbox.claim(5000, 10)).map((d) => d.snapshot.id)).toEqual(['o-1']);
  });
});
