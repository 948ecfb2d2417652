import { expect, it } from 'vitest';
import { isStepfoldError } from '../../errors.js';
import { MAX_FLOW_TEXT_LENGTH } from '../../store/flow-calls.js';
import type { SuiteContext } from './context.js';
import { describeFlowCounters } from './flow-counters.js';
import { describeFlowDelete } from './flow-delete.js';
import { counter, freshFlow, heldBy, listAll, rate, slot, T0, waitingOn } from './flow-harness.js';
import { describeFlowInCreate } from './flow-in-create.js';
import { describeFlowInSave } from './flow-in-save.js';
import { describeFlowLaggingNow } from './flow-lagging-now.js';
import { describeFlowRaces } from './flow-races.js';

// The `flow` capability (`store.flow`): concurrency slots with leases, rate windows, waiters woken
// by releases, the listing, and what the checks refuse. Every call takes the caller's `now`, so
// the part runs on made-up times and never sleeps.

/** The flow part: the contract on one store object, then races across store objects. */
export function describeFlow(ctx: SuiteContext): void {
  describeSlots(ctx);
  describeRates(ctx);
  describeFlowLaggingNow(ctx);
  describeListing(ctx);
  describeFlowRaces(ctx);
  describeFlowInSave(ctx);
  describeFlowInCreate(ctx);
  describeFlowCounters(ctx);
  if (ctx.options.deleteReleasesFlow !== false) describeFlowDelete(ctx);
}

function describeSlots(ctx: SuiteContext): void {
  it('all or nothing: with one counter full, no other is taken, and the holder waits on the full one', async () => {
    const { flow } = await freshFlow(ctx);
    expect(await flow.acquire('h1', 'i1', [slot('aon', 'b', 1)], T0, T0 + 500)).toEqual({ granted: true });
    const denied = await flow.acquire(
      'h2',
      'i2',
      [slot('aon', 'a', 2), slot('aon', 'b', 1)],
      T0 + 1,
      T0 + 900,
    );
    expect(denied).toEqual({ granted: false, need: slot('aon', 'b', 1), until: T0 + 500, count: 1 });
    expect(heldBy(await counter(flow, T0 + 1, 'aon', 'a'))).toEqual([]);
    const b = await counter(flow, T0 + 1, 'aon', 'b');
    expect(heldBy(b)).toEqual(['h1']);
    expect(b?.waiting).toEqual([{ holder: 'h2', instance: 'i2', since: T0 + 1 }]);
    // A holder of the other counter is not denied for a slot h2 never took.
    expect(await flow.acquire('h3', 'i3', [slot('aon', 'a', 1)], T0 + 2, T0 + 900)).toEqual({
      granted: true,
    });
  });

  it('a holder acquiring again is granted again and its lease moves', async () => {
    const { flow } = await freshFlow(ctx);
    const need = [slot('again', 'k', 1)];
    expect((await flow.acquire('h1', 'i1', need, T0, T0 + 1000)).granted).toBe(true);
    expect((await flow.acquire('h1', 'i1', need, T0 + 10, T0 + 5000)).granted).toBe(true);
    expect(await flow.acquire('h2', 'i2', need, T0 + 2000, T0 + 9000)).toMatchObject({
      granted: false,
      until: T0 + 5000,
      count: 1,
    });
    expect((await counter(flow, T0 + 10, 'again', 'k'))?.holders).toEqual([
      { holder: 'h1', until: T0 + 5000 },
    ]);
  });

  it('a lapsed lease frees its slot, renew keeps one, and a renewal after the lapse revives nothing', async () => {
    const { flow } = await freshFlow(ctx);
    const need = [slot('lease', 'k', 1)];
    await flow.acquire('h1', 'i1', need, T0, T0 + 100);
    expect(await flow.acquire('h2', 'i2', need, T0 + 50, T0 + 400)).toMatchObject({
      granted: false,
      until: T0 + 100,
    });
    await flow.renew(['h1', 'unknown'], T0 + 300);
    expect(await flow.acquire('h2', 'i2', need, T0 + 150, T0 + 400)).toMatchObject({
      granted: false,
      until: T0 + 300,
    });
    // The lease ends at `until`: at that time the slot is free.
    expect(heldBy(await counter(flow, T0 + 300, 'lease', 'k'))).toEqual([]);
    expect((await flow.acquire('h2', 'i2', need, T0 + 300, T0 + 700)).granted).toBe(true);
    await flow.renew(['h1'], T0 + 2000);
    const k = await counter(flow, T0 + 301, 'lease', 'k');
    expect(k?.holders).toEqual([{ holder: 'h2', until: T0 + 700 }]);
    expect(k?.waiting).toEqual([]);
    expect(await flow.acquire('h3', 'i3', need, T0 + 302, T0 + 900)).toMatchObject({
      granted: false,
      count: 1,
    });
  });

  it('release frees slots and names the oldest waiters, at most one per slot it freed', async () => {
    const { flow } = await freshFlow(ctx);
    const a = [slot('rel', 'a', 2)];
    const b = [slot('rel', 'b', 1)];
    await flow.acquire('h1', 'i-h1', a, T0, T0 + 10_000);
    await flow.acquire('h2', 'i-h2', a, T0, T0 + 10_000);
    await flow.acquire('h3', 'i-h3', b, T0, T0 + 10_000);
    expect((await flow.acquire('w4', 'i-w4', b, T0 + 5, T0 + 10_000)).granted).toBe(false);
    for (const [w, at] of [
      ['w1', 10],
      ['w2', 20],
      ['w3', 30],
      ['w1', 40],
    ] as const)
      expect((await flow.acquire(w, `i-${w}`, a, T0 + at, T0 + 10_000)).granted).toBe(false);
    // Waiting again keeps the first time.
    expect((await counter(flow, T0 + 40, 'rel', 'a'))?.waiting).toEqual([
      { holder: 'w1', instance: 'i-w1', since: T0 + 10 },
      { holder: 'w2', instance: 'i-w2', since: T0 + 20 },
      { holder: 'w3', instance: 'i-w3', since: T0 + 30 },
    ]);
    expect(await flow.release(['h1', 'h2'], T0 + 50)).toEqual(['i-w1', 'i-w2']);
    expect(await flow.release(['nobody'], T0 + 50)).toEqual([]);
    // w1 takes its slot: its waiter entry goes with the grant.
    expect((await flow.acquire('w1', 'i-w1', a, T0 + 60, T0 + 10_000)).granted).toBe(true);
    expect(waitingOn(await counter(flow, T0 + 60, 'rel', 'a'))).toEqual(['w2', 'w3']);
    // Two counters freed by one release: each names its oldest, all of them oldest first, once.
    expect(await flow.release(['w1', 'h3'], T0 + 70)).toEqual(['i-w4', 'i-w2']);
    // Releasing a waiter removes its entry, and wakes no one (it held nothing).
    expect(await flow.release(['w3', 'w4'], T0 + 80)).toEqual([]);
    expect(waitingOn(await counter(flow, T0 + 80, 'rel', 'a'))).toEqual(['w2']);
    expect(await counter(flow, T0 + 80, 'rel', 'b')).toBeUndefined();
  });

  it('nothing leaks: once every holder and waiter is released, nothing is listed', async () => {
    const { flow } = await freshFlow(ctx);
    const needs = [slot('leak', 'a', 2), rate('leak', 'a', 2, 1000), slot('leak-2', '', 1)];
    const holders = ['l1', 'l2', 'l3', 'l4'];
    for (const [i, h] of holders.entries()) await flow.acquire(h, `i-${h}`, needs, T0 + i, T0 + 60_000);
    expect((await listAll(flow, T0 + 10)).length).toBe(3);
    await flow.release(holders.slice(0, 2), T0 + 20);
    await flow.release(holders.slice(2), T0 + 30);
    // The starts stay in their window (a release does not give a rate back), then leave it.
    expect((await listAll(flow, T0 + 30)).map((c) => [c.scope, c.periodMs, heldBy(c)])).toEqual([
      ['leak', 1000, ['l1']],
    ]);
    expect(await listAll(flow, T0 + 1000)).toEqual([]);
  });
}

function describeRates(ctx: SuiteContext): void {
  it('a rate grants `limit` starts per window, then denies until the oldest start leaves it', async () => {
    const { flow } = await freshFlow(ctx);
    const need = [rate('rate', 'k', 3, 1000)];
    for (const [h, at] of [
      ['s1', 0],
      ['s2', 100],
      ['s3', 200],
    ] as const)
      expect(await flow.acquire(h, `i-${h}`, need, T0 + at, T0 + at + 50)).toEqual({ granted: true });
    expect(await flow.acquire('s4', 'i-s4', need, T0 + 300, T0 + 350)).toEqual({
      granted: false,
      need: need[0],
      until: T0 + 1000,
      count: 3,
    });
    // The same holder again: granted, no second start.
    expect((await flow.acquire('s1', 'i-s1', need, T0 + 500, T0 + 550)).granted).toBe(true);
    expect(await flow.acquire('s4', 'i-s4', need, T0 + 999, T0 + 1050)).toMatchObject({
      granted: false,
      until: T0 + 1000,
    });
    expect((await flow.acquire('s4', 'i-s4', need, T0 + 1000, T0 + 1050)).granted).toBe(true);
    expect(await flow.acquire('s5', 'i-s5', need, T0 + 1000, T0 + 1050)).toMatchObject({
      granted: false,
      until: T0 + 1100,
    });
    // A release gives no start back, and wakes nobody for a rate.
    expect(await flow.release(['s2', 's3'], T0 + 1050)).toEqual([]);
    expect(await flow.acquire('s5', 'i-s5', need, T0 + 1050, T0 + 1100)).toMatchObject({
      granted: false,
      until: T0 + 1100,
    });
    const listed = await counter(flow, T0 + 1050, 'rate', 'k', 1000);
    expect(listed).toMatchObject({ limit: 3, periodMs: 1000, waiting: [{ holder: 's5', since: T0 + 1000 }] });
    expect(listed?.holders.sort((x, y) => x.until - y.until)).toEqual([
      { holder: 's2', until: T0 + 1100 },
      { holder: 's3', until: T0 + 1200 },
      { holder: 's4', until: T0 + 2000 },
    ]);
  });

  it("a step's concurrency limit and its rate limits count apart on one scope and key", async () => {
    const { flow } = await freshFlow(ctx);
    const needs = [slot('both', 'k', 1), rate('both', 'k', 2, 1000), rate('both', 'k', 5, 60_000)];
    expect((await flow.acquire('b1', 'i1', needs, T0, T0 + 100)).granted).toBe(true);
    await flow.release(['b1'], T0 + 10);
    expect((await flow.acquire('b2', 'i2', needs, T0 + 20, T0 + 100)).granted).toBe(true);
    await flow.release(['b2'], T0 + 30);
    expect(await flow.acquire('b3', 'i3', needs, T0 + 40, T0 + 100)).toMatchObject({
      granted: false,
      need: rate('both', 'k', 2, 1000),
      until: T0 + 1000,
    });
    // Two limits naming one counter: the lower one counts.
    expect(
      await flow.acquire('b3', 'i3', [slot('twice', 'k', 3), slot('twice', 'k', 1)], T0, T0 + 100),
    ).toEqual({
      granted: true,
    });
    expect((await flow.acquire('b4', 'i4', [slot('twice', 'k', 3)], T0, T0 + 100)).granted).toBe(true);
    expect((await flow.acquire('b5', 'i5', [slot('twice', 'k', 2)], T0, T0 + 100)).granted).toBe(false);
  });
}

// Scopes and keys that are operators, patterns or separators somewhere: stored and listed as data.
const TRICKY_TEXTS = [
  "it's",
  '%_*?[]',
  'a:b{c}',
  '$where',
  '__proto__',
  ' ',
  'ünï 😀',
  '"\\\n',
  'x'.repeat(MAX_FLOW_TEXT_LENGTH),
];

function describeListing(ctx: SuiteContext): void {
  it('lists counters in (scope, key) order by cursor, one scope or all, with holders and waiters', async () => {
    const { flow } = await freshFlow(ctx);
    for (const key of ['k3', 'k1', 'k2'])
      await flow.acquire(`h-${key}`, 'i1', [slot('ls-a', key, 1)], T0, T0 + 100);
    await flow.acquire('w', 'i-w', [slot('ls-a', 'k2', 1)], T0 + 1, T0 + 100);
    await flow.acquire(
      'r',
      'i-r',
      [slot('ls-b', 'k1', 2), rate('ls-b', 'k1', 2, 500), rate('ls-b', '', 1, 500)],
      T0,
      T0 + 100,
    );
    const all = await listAll(flow, T0 + 2, undefined, 2);
    expect(all.map((c) => [c.scope, c.key, c.periodMs])).toEqual([
      ['ls-a', 'k1', undefined],
      ['ls-a', 'k2', undefined],
      ['ls-a', 'k3', undefined],
      ['ls-b', '', 500],
      ['ls-b', 'k1', undefined],
      ['ls-b', 'k1', 500],
    ]);
    expect(all[1]).toEqual({
      scope: 'ls-a',
      key: 'k2',
      limit: 1,
      holders: [{ holder: 'h-k2', until: T0 + 100 }],
      waiting: [{ holder: 'w', instance: 'i-w', since: T0 + 1 }],
    });
    expect((await listAll(flow, T0 + 2, 'ls-b', 1)).map((c) => c.key)).toEqual(['', 'k1', 'k1']);
    expect(await listAll(flow, T0 + 2, 'ls-c')).toEqual([]);
    const first = await flow.list({ limit: 3, now: T0 + 2 });
    expect(first.items).toEqual(all.slice(0, 3));
    expect((await flow.list({ limit: 3, cursor: first.cursor, now: T0 + 2 })).cursor).toBeNull();
    // Past every lease and window, only the waiter is left.
    expect((await listAll(flow, T0 + 600)).map((c) => [c.key, heldBy(c), waitingOn(c)])).toEqual([
      ['k2', [], ['w']],
    ]);
  });

  it('stores and lists scopes and keys of any characters as they were given', async () => {
    const { flow } = await freshFlow(ctx);
    for (const [i, text] of TRICKY_TEXTS.entries()) {
      expect(
        (await flow.acquire(`t${i}`, 'i1', [slot(text, text, 1), rate('tricky', text, 1, 100)], T0, T0 + 50))
          .granted,
      ).toBe(true);
      expect((await flow.acquire(`u${i}`, 'i2', [slot(text, text, 1)], T0, T0 + 50)).granted).toBe(false);
    }
    const listed = await listAll(flow, T0, undefined, 4);
    expect(
      listed
        .filter((c) => c.scope === 'tricky')
        .map((c) => c.key)
        .sort(),
    ).toEqual([...TRICKY_TEXTS].sort());
    for (const [i, text] of TRICKY_TEXTS.entries()) {
      const c = await counter(flow, T0, text, text);
      expect([heldBy(c), waitingOn(c)]).toEqual([[`t${i}`], [`u${i}`]]);
    }
  });

  it('refuses malformed holders, needs, times and cursors with typed errors, writing nothing', async () => {
    const { flow } = await freshFlow(ctx);
    const code = (p: Promise<unknown>) =>
      p.then(
        () => 'ok',
        (e: unknown) => (isStepfoldError(e) ? e.code : String(e)),
      );
    const ok = [slot('bad', 'k', 1)];
    expect(await code(flow.acquire('a b', 'i', ok, T0, T0 + 1))).toBe('INVALID_ID');
    expect(await code(flow.acquire('', 'i', ok, T0, T0 + 1))).toBe('INVALID_ID');
    expect(await code(flow.acquire('h', 'not an id', ok, T0, T0 + 1))).toBe('INVALID_ID');
    for (const needs of [
      [slot('bad', 'k', 0)],
      [slot('bad', 'k', 1.5)],
      [slot('', 'k', 1)],
      [slot('bad', 'a\u0000b', 1)],
      [slot('bad', '\ud800', 1)],
      [rate('bad', 'k', 1, 0)],
      [{ scope: 'bad', key: 7, limit: 1 }],
      null,
    ])
      expect(await code(flow.acquire('h', 'i', needs as never, T0, T0 + 1)), JSON.stringify(needs)).toBe(
        'INVALID_INPUT',
      );
    expect(await code(flow.acquire('h', 'i', ok, Number.NaN, T0 + 1))).toBe('INVALID_INPUT');
    expect(await code(flow.acquire('h', 'i', ok, T0, Number.POSITIVE_INFINITY))).toBe('INVALID_INPUT');
    expect(await code(flow.release(['ok', 'a b'], T0))).toBe('INVALID_ID');
    expect(await code(flow.renew(['h'], 1.5))).toBe('INVALID_INPUT');
    expect(await code(flow.list({ limit: 0, now: T0 }))).toBe('INVALID_INPUT');
    expect(await code(flow.list({ limit: 10, cursor: 'nope', now: T0 }))).toBe('INVALID_INPUT');
    expect(await listAll(flow, T0)).toEqual([]);
    // No need at all: granted, nothing written.
    expect(await flow.acquire('h', 'i', [], T0, T0 + 1)).toEqual({ granted: true });
    expect(await flow.release([], T0)).toEqual([]);
  });
}
