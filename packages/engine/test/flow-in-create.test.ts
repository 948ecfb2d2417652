import {
  aesGcmCodec,
  type CreateOptions,
  createMemoryStore,
  createRunner,
  defineCodec,
  type FlowStore,
  flowControl,
  isStepfoldError,
  type Store,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it, vi } from 'vitest';

// On a store whose create does flow work (`flow.inCreate`: memory, PostgreSQL, Redis), a start
// whose first task is limited takes that attempt's holder in the create: no acquire call of its
// own. A refusal wrote nothing, and the runner asks `acquire` alone (which records the waiter) and
// creates the instance waiting. A wrapper that copies `inCreate` but drops the option is caught by
// the store's missing confirmation: the runner acquires after that create, and before every later one.

/** The memory store with its calls recorded: each acquire's holder and each create's options. */
function recordedStore(passOn = true): {
  store: Store;
  flow: FlowStore;
  acquired: string[];
  creates: Array<CreateOptions | undefined>;
} {
  const inner = createMemoryStore();
  const flow = inner.flow!;
  const acquired: string[] = [];
  const creates: Array<CreateOptions | undefined> = [];
  const store: Store = Object.assign(Object.create(inner) as Store, {
    create: (s: Parameters<Store['create']>[0], o?: CreateOptions) => {
      creates.push(o);
      return passOn ? inner.create(s, o) : inner.create(s);
    },
    flow: {
      ...flow,
      acquire: (...a: Parameters<FlowStore['acquire']>) => {
        acquired.push(a[0]);
        return flow.acquire(...a);
      },
    },
  });
  return { store, flow, acquired, creates };
}

const limited = workflow('create-limited', 1)
  .input<{ customer: string }>()
  .task('charge', { handler: 'work', concurrency: { key: 'input.customer', limit: 1 } })
  .build();

const admitted = workflow('create-admitted', 1, { concurrency: { key: 'input.customer', limit: 1 } })
  .input<{ customer: string }>()
  .task('charge', { handler: 'work', concurrency: { key: 'input.customer', limit: 1 } })
  .build();

/** An instance limit and no limited task: the admission is the create's one holder. */
const admittedOnly = workflow('create-admitted-only', 1, { concurrency: { key: 'input.customer', limit: 1 } })
  .input<{ customer: string }>()
  .task('charge', { handler: 'work' })
  .build();

const runnerOn = (store: Store) =>
  createRunner({
    kinds: [flowControl],
    store,
    workflows: [limited, admitted, admittedOnly],
    handlers: { work: () => null },
  });

const charge = { scope: 'create-limited/charge', key: 'c1', limit: 1 };

describe('flow holders taken with the create', () => {
  it("a start whose first task is limited takes the attempt's holder in the create", async () => {
    const { store, flow, acquired, creates } = recordedStore();
    expect(flow.inCreate).toBe(true);
    const s = await runnerOn(store).start('create-limited', 'c-1', { customer: 'c1' });
    expect(s.status).toBe('completed');
    expect(acquired).toEqual([]);
    expect(creates.map((o) => o?.flow?.take.holder)).toEqual(['c-1/1/charge/1#run#1@1']);
    expect((await flow.list({ limit: 10, now: Date.now() })).items).toEqual([]);
  });

  it('a holder refused in the create is asked alone, and the instance is created waiting', async () => {
    const { store, flow, acquired, creates } = recordedStore();
    const other = await flow.acquire('other#run#1', 'other', [charge], Date.now(), Date.now() + 60_000);
    expect(other.granted).toBe(true);
    const runner = runnerOn(store);
    await runner.start('create-limited', 'c-2', { customer: 'c1' }, { wait: 'write' });
    const stored = await runner.get('c-2');
    expect(stored?.timers.some((t) => t.kind === 'throttle' && t.step === 'charge')).toBe(true);
    // The create with the take wrote nothing; the plain create after the acquire wrote the waiter.
    expect(creates.map((o) => o?.flow?.take.holder)).toEqual(['c-2/1/charge/1#run#1@1', undefined]);
    expect(acquired).toEqual(['c-2/1/charge/1#run#1@1']);
    const listed = (await flow.list({ limit: 10, now: Date.now() })).items.find(
      (c) => c.scope === charge.scope,
    );
    expect(listed?.waiting.map((w) => w.instance)).toEqual(['c-2']);
    expect(await flow.release(['other#run#1'], Date.now())).toEqual(['c-2']);
    await runner.tick('c-2');
    await vi.waitFor(async () => expect((await runner.get('c-2'))?.status).toBe('completed'));
  });

  it('a runner with a codec (its sealed store) passes the option on: no acquire either', async () => {
    const { store, acquired, creates } = recordedStore();
    const codec = defineCodec(aesGcmCodec({ keys: { k1: crypto.getRandomValues(new Uint8Array(32)) } }));
    const runner = createRunner({
      kinds: [flowControl],
      store,
      codec,
      workflows: [limited],
      handlers: { work: () => null },
    });
    expect((await runner.start('create-limited', 'c-8', { customer: 'c1' })).status).toBe('completed');
    expect(creates.map((o) => o?.flow?.take.holder)).toEqual(['c-8/1/charge/1#run#1@1']);
    expect(acquired).toEqual([]);
  });

  it('an instance limit is admitted by acquire before the create, as before', async () => {
    const { store, acquired, creates } = recordedStore();
    const s = await runnerOn(store).start('create-admitted', 'c-3', { customer: 'c1' });
    expect(s.status).toBe('completed');
    expect(creates.map((o) => o?.flow)).toEqual([undefined]);
    expect(acquired.length).toBeGreaterThanOrEqual(1);
  });

  it("an instance limit with no limited first task: the admission's holder taken in the create", async () => {
    const { store, flow, acquired, creates } = recordedStore();
    const runner = runnerOn(store);
    let finish!: () => void;
    const gate = new Promise<void>((r) => {
      finish = r;
    });
    const slow = createRunner({
      kinds: [flowControl],
      store,
      workflows: [admittedOnly],
      handlers: { work: () => gate.then(() => null) },
    });
    const s = await slow.start('create-admitted-only', 'a-1', { customer: 'c1' }, { wait: 'write' });
    // Created admitted, its first step running: one create, no acquire.
    expect(s.admission).toBeUndefined();
    expect(s.holds).toEqual([{ scope: 'create-admitted-only', key: 'c1', limit: 1 }]);
    expect(s.log.map((e) => e.type)).toContain('instance.admitted');
    expect(acquired).toEqual([]);
    expect(creates.map((o) => o?.flow?.take.holder)).toEqual(['a-1']);
    const held = (await flow.list({ limit: 10, now: Date.now() })).items;
    expect(held.map((c) => [c.scope, c.key, c.holders.map((h) => h.holder)])).toEqual([
      ['create-admitted-only', 'c1', ['a-1']],
    ]);
    // The key is full: the next start's create is refused (it wrote nothing), asked alone, and waits.
    await runner.start('create-admitted-only', 'a-2', { customer: 'c1' }, { wait: 'write' });
    expect(creates.map((o) => o?.flow?.take.holder)).toEqual(['a-1', 'a-2', undefined]);
    expect(acquired).toEqual(['a-2']);
    const waiting = await runner.get('a-2');
    expect(waiting?.admission?.throttled).toBeDefined();
    expect(waiting?.steps['charge']).toBeUndefined();
    finish();
    await vi.waitFor(async () => expect((await slow.get('a-1'))?.status).toBe('completed'));
    await runner.tick('a-2');
    await vi.waitFor(async () => expect((await runner.get('a-2'))?.status).toBe('completed'));
    expect((await flow.list({ limit: 10, now: Date.now() })).items).toEqual([]);
  });

  it('a wrapper that drops CreateOptions.flow loses no take: acquired after, then before every later create', async () => {
    const { store, flow, acquired, creates } = recordedStore(false);
    const runner = runnerOn(store);
    const hold = (id: string) => `${id}/1/charge/1#run#1@1`;
    // Held open by a handler that waits, so the slot stays taken while it is looked at.
    let finish!: () => void;
    const gate = new Promise<void>((r) => {
      finish = r;
    });
    const slow = createRunner({
      kinds: [flowControl],
      store,
      workflows: [limited, admitted],
      handlers: { work: () => gate.then(() => null) },
    });
    await slow.start('create-limited', 'c-4', { customer: 'c1' }, { wait: 'write' });
    expect(creates.map((o) => o?.flow?.take.holder)).toEqual([hold('c-4')]);
    // Not confirmed: the holder is acquired after the create, so the slot is held all the same.
    expect(acquired).toEqual([hold('c-4')]);
    const held = (await flow.list({ limit: 10, now: Date.now() })).items.find(
      (c) => c.scope === charge.scope,
    );
    expect(held?.holders.map((h) => h.holder)).toEqual([hold('c-4')]);
    finish();
    await vi.waitFor(async () => expect((await slow.get('c-4'))?.status).toBe('completed'));
    // Every later create of that runner acquires first and creates plainly.
    await runner.start('create-limited', 'c-5', { customer: 'c2' });
    await slow.start('create-limited', 'c-6', { customer: 'c3' });
    expect(creates.at(-1)).toBeUndefined();
    expect(acquired).toEqual([hold('c-4'), hold('c-5'), hold('c-6')]);
  });

  it('a wrapper that drops CreateOptions.flow on a full key: the create rejects with INVALID_OPTIONS naming it', async () => {
    const { store, flow } = recordedStore(false);
    expect(
      (await flow.acquire('other#run#1', 'other', [charge], Date.now(), Date.now() + 60_000)).granted,
    ).toBe(true);
    const failed = await runnerOn(store)
      .start('create-limited', 'c-7', { customer: 'c1' })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(isStepfoldError(failed, 'INVALID_OPTIONS')).toBe(true);
    expect(JSON.stringify((failed as { issues?: unknown }).issues)).toMatch(/CreateOptions\.flow/);
    // No waiter entry is left for an instance that will never be woken by it.
    await vi.waitFor(async () => {
      const listed = (await flow.list({ limit: 10, now: Date.now() })).items.find(
        (c) => c.scope === charge.scope,
      );
      expect(listed?.waiting).toEqual([]);
    });
  });
});
