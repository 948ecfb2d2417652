import { describe, expect, it } from 'vitest';
import {
  callbackInstance,
  callbackTokens,
  createMemoryStore,
  createRunner,
  isStepfoldError,
  parseHttpRoute,
  workflow,
} from '../src/index.js';

// Callback tokens: a handler mails a link (a test outbox), a POST of its token applies the
// manager's decision once; a replay, a forged token, a token of an ended step and an expired one
// are refused with their codes and nothing written.

const SECRET = 'a-test-secret-of-at-least-32-bytes!!';
const expense = workflow('expense', 1)
  .task('mail', { handler: 'mail' })
  .human('manager', { timeoutMs: 3_600_000 })
  .task('pay', { handler: 'pay' })
  .build();

function setup(o: { keys?: Record<string, string>; current?: string; ttlMs?: number } = {}) {
  let now = 1_000_000;
  const clock = () => now;
  const outbox: string[] = [];
  const paid: string[] = [];
  const store = createMemoryStore();
  const callbacks = callbackTokens({ keys: o.keys ?? { k1: SECRET }, current: o.current, ttlMs: o.ttlMs });
  const runner = createRunner({
    store,
    clock,
    workflows: [expense],
    callbacks,
    handlers: {
      mail: async (ctx) => {
        outbox.push(await ctx.callback('manager'));
        return null;
      },
      pay: (ctx) => {
        paid.push(ctx.instanceId);
        return null;
      },
    },
  });
  return {
    runner,
    store,
    outbox,
    paid,
    callbacks,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** The error code a promise rejects with. */
async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (e) {
    return isStepfoldError(e) ? e.code : String(e);
  }
  return 'resolved';
}

describe('callback tokens', () => {
  it('a mailed token applies the decision once; a replay is refused and writes nothing', async () => {
    const { runner, store, outbox, paid } = setup();
    await runner.start('expense', 'e-1');
    expect(outbox).toHaveLength(1);
    const token = outbox[0]!;
    expect(callbackInstance(token)).toBe('e-1');
    // The POST /callbacks/:token route names it.
    expect(parseHttpRoute('POST', `/callbacks/${token}`)).toEqual({ kind: 'callback', token });
    const done = await runner.callback(token, { decision: 'approve', by: 'ana' });
    expect(done.status).toBe('completed');
    expect(done.steps['manager']?.output).toEqual({ decision: 'approve', by: 'ana' });
    expect(paid).toEqual(['e-1']);
    const before = await store.load('e-1');
    expect(await codeOf(runner.callback(token, { decision: 'reject' }))).toBe('STEP_NOT_WAITING');
    expect((await store.load('e-1'))?.version).toBe(before?.version);
  });

  it('two presentations at once apply it once: the other is refused', async () => {
    const { runner, outbox, paid } = setup();
    await runner.start('expense', 'e-2');
    const token = outbox[0]!;
    const results = await Promise.allSettled([
      runner.callback(token, { decision: 'approve' }),
      runner.callback(token, { decision: 'approve' }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason.code).toBe('STEP_NOT_WAITING');
    expect(paid).toEqual(['e-2']);
  });

  it('a forged token, or one signed by a key the runner does not hold, is CALLBACK_INVALID and writes nothing', async () => {
    const { runner, store, outbox } = setup();
    await runner.start('expense', 'e-3');
    const token = outbox[0]!;
    const [prefix, body, mac] = token.split('.') as [string, string, string];
    // The claims changed to another instance, the signature kept.
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${prefix}.${Buffer.from(JSON.stringify({ ...claims, i: 'e-other' })).toString('base64url')}.${mac}`;
    const before = (await store.load('e-3'))?.version;
    expect(await codeOf(runner.callback(forged, { decision: 'approve' }))).toBe('CALLBACK_INVALID');
    expect(await codeOf(runner.callback(`${prefix}.${body}.${mac.slice(0, -2)}AA`, {}))).toBe(
      'CALLBACK_INVALID',
    );
    expect(await codeOf(runner.callback('not-a-token', {}))).toBe('CALLBACK_INVALID');
    // Another deployment's key: a good token of theirs is nothing here.
    const theirs = setup({ keys: { k1: 'another-secret-of-at-least-32-bytes!!' } });
    await theirs.runner.start('expense', 'e-3');
    expect(await codeOf(runner.callback(theirs.outbox[0]!, { decision: 'approve' }))).toBe(
      'CALLBACK_INVALID',
    );
    expect((await store.load('e-3'))?.version).toBe(before);
    expect((await store.load('e-3'))?.status).toBe('waiting');
  });

  it('a token of a step that has ended (timed out, or decided another way) is STEP_NOT_WAITING', async () => {
    const { runner, store, outbox, advance } = setup();
    await runner.start('expense', 'e-4');
    await runner.signal('e-4', 'manager', { decision: 'approve' });
    expect(await codeOf(runner.callback(outbox[0]!, { decision: 'reject' }))).toBe('STEP_NOT_WAITING');
    await runner.start('expense', 'e-5');
    advance(3_600_001);
    await runner.tick('e-5');
    const timedOut = await store.load('e-5');
    expect(await codeOf(runner.callback(outbox[1]!, { decision: 'approve' }))).toBe('STEP_NOT_WAITING');
    expect((await store.load('e-5'))?.version).toBe(timedOut?.version);
  });

  it('an expired token is CALLBACK_EXPIRED and writes nothing', async () => {
    const { runner, store, outbox, advance } = setup({ ttlMs: 60_000 });
    await runner.start('expense', 'e-6');
    advance(60_001);
    const before = (await store.load('e-6'))?.version;
    expect(await codeOf(runner.callback(outbox[0]!, { decision: 'approve' }))).toBe('CALLBACK_EXPIRED');
    expect((await store.load('e-6'))?.version).toBe(before);
  });

  it('after a key rotation, tokens of the old key still apply while it stays listed', async () => {
    const old = setup();
    await old.runner.start('expense', 'e-7');
    const rotated = callbackTokens({
      keys: { k1: SECRET, k2: 'the-next-secret-of-at-least-32-bytes' },
      current: 'k2',
    });
    const runner = createRunner({
      store: old.store,
      clock: () => 1_000_000,
      workflows: [expense],
      callbacks: rotated,
      handlers: { mail: () => null, pay: () => null },
    });
    expect((await rotated.verify(old.outbox[0]!, 1_000_000)).keyId).toBe('k1');
    expect((await runner.callback(old.outbox[0]!, { decision: 'approve' })).status).toBe('completed');
  });

  it('refuses weak or missing keys, and ctx.callback without callbacks fails the attempt with INVALID_OPTIONS', async () => {
    expect(() => callbackTokens({ keys: { k1: 'short' } })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
    expect(() => callbackTokens({ keys: {} })).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    expect(() => callbackTokens({ keys: { a: SECRET, b: SECRET } })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTIONS' }),
    );
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [expense],
      handlers: { mail: async (ctx) => ctx.callback('manager'), pay: () => null },
    });
    const s = await runner.start('expense', 'e-8');
    expect(s.steps['mail']?.error?.code ?? s.error?.code).toBe('INVALID_OPTIONS');
    expect(await codeOf(runner.callback('x.y.z', {}))).toBe('INVALID_OPTIONS');
  });
});
