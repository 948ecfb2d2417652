import {
  createRunner,
  flowControl,
  isStepfoldError,
  makeTestSnapshot,
  type Store,
  workflow,
} from '@stepfold/engine';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedisStore, keysFor, SCRIPTS } from '../src/index.js';
import { dropFlow } from './flow-suite.js';
import { testClient, uniquePrefix } from './server.js';

// A create that takes its first attempt's holder in the create's own script (one server): what it
// sends, and a limited workflow's round trips, counted on the client, against the same workflow
// without limits and against a wrapper that hides inCreate (the runner then acquires first). The
// conformance part (flow-in-create) checks what the take writes, from redis.test.ts.

const client = testClient();
const prefixes: string[] = [];
afterAll(async () => {
  for (const p of prefixes) await dropFlow(client, p);
  await client.quit();
});

/**
 * The commands the client sends while `run` runs: EVALSHA as the script's name, others as they
 * are, less an EVAL: one follows an EVALSHA only when the server answered NOSCRIPT (another test
 * file's SCRIPT FLUSH), and runs that same script once.
 */
async function sent(run: () => Promise<unknown>): Promise<string[]> {
  const send = client.sendCommand.bind(client);
  const names = new Map(SCRIPTS.map((s) => [s.sha, s.name]));
  const out: string[] = [];
  client.sendCommand = (...args: Parameters<typeof send>) => {
    const c = args[0] as { name: string; args: unknown[] };
    if (c.name !== 'eval')
      out.push(c.name === 'evalsha' ? (names.get(String(c.args[0])) ?? 'evalsha') : c.name);
    return send(...args);
  };
  try {
    await run();
  } finally {
    client.sendCommand = send;
  }
  return out;
}

/** A fresh store on one server, its scripts loaded (no NOSCRIPT retry counted). */
async function fresh() {
  const prefix = uniquePrefix('flow-in-create');
  prefixes.push(prefix);
  const store = createRedisStore({ client, prefix });
  await store.setup();
  return { store, prefix };
}

/** Three tasks, each under a concurrency limit of the input's key, or none. */
const steps = (name: string, limited: boolean) => {
  const concurrency = limited ? { concurrency: { key: 'input.key' as const, limit: 4 } } : {};
  return workflow(name, 1)
    .input<{ key: string }>()
    .task('s1', { handler: 'work', ...concurrency })
    .task('s2', { handler: 'work', ...concurrency })
    .task('s3', { handler: 'work', ...concurrency })
    .build();
};

const runnerOn = (store: Store) =>
  createRunner({
    kinds: [flowControl],
    store,
    workflows: [steps('plain', false), steps('limited', true)],
    handlers: { work: () => null },
  });

describe('redis adapter: a create taking a flow holder (one server)', () => {
  it('says so: flow.inCreate', async () => {
    expect((await fresh()).store.flow?.inCreate).toBe(true);
  });

  it('is one script: granted, refused (nothing written), or an id taken (nothing taken)', async () => {
    const { store, prefix } = await fresh();
    const need = { scope: 'fic', key: 'k', limit: 1 };
    const take = (holder: string, now: number) => ({
      flow: { take: { holder, needs: [need], until: now + 5000 }, now, taken: () => {} },
    });
    const codes: unknown[] = [];
    const code = (e: unknown) => void codes.push(isStepfoldError(e) ? e.code : e);
    expect(await sent(() => store.create(makeTestSnapshot('a'), take('a#1', 1000)))).toEqual(['create-flow']);
    // Full: refused, no instance written (no waiter either, below).
    expect(await sent(() => store.create(makeTestSnapshot('b'), take('b#1', 1001)).catch(code))).toEqual([
      'create-flow',
    ]);
    expect(await client.exists(keysFor(prefix).instance('b'))).toBe(0);
    // An id taken: the script answers before its take, and the kit looks nothing up.
    expect(await sent(() => store.create(makeTestSnapshot('a'), take('c#1', 1002)).catch(code))).toEqual([
      'create-flow',
    ]);
    expect(codes).toEqual(['FLOW_REFUSED', 'ALREADY_EXISTS']);
    const listed = await store.flow!.list({ scope: 'fic', limit: 10, now: 1002 });
    expect(listed.items.map((k) => [k.holders.map((h) => h.holder), k.waiting])).toEqual([[['a#1'], []]]);
  });

  it('a limited 3-task workflow costs the round trips of the same workflow without limits', async () => {
    const { store } = await fresh();
    const runner = runnerOn(store);
    // The same store as a wrapper that does not pass CreateOptions.flow on sees it.
    const without = runnerOn({ ...store, flow: { ...store.flow!, inCreate: undefined } });
    const run = (r: typeof runner, name: string, id: string) =>
      sent(async () => expect((await r.start(name, id, { key: 'k' })).status).toBe('completed'));
    const plain = await run(runner, 'plain', 'p-1');
    const limited = await run(runner, 'limited', 'l-1');
    const acquiring = await run(without, 'limited', 'l-2');
    // The create and a save per task; limited, the create takes s1's slot, each save moves it on.
    expect(plain).toEqual(['create', 'save', 'save', 'save']);
    expect(limited).toEqual(['create-flow', 'save-flow', 'save-flow', 'save-flow']);
    // Before the create took it: an acquire first.
    expect(acquiring).toEqual(['flow-acquire', 'create', 'save-flow', 'save-flow', 'save-flow']);
    expect((await store.flow!.list({ limit: 10, now: Date.now() })).items).toEqual([]);
  });
});
