import {
  aesGcmCodec,
  createHarness,
  createMemoryStore,
  createRunner,
  defineWorkflow,
  type HandlerContext,
  isStepfoldError,
  type Snapshot,
  searchAttributes,
  step,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

// Search attributes: declared on the workflow, read from data paths or set by handlers, carried in
// `Snapshot.search`, refused with INVALID_SEARCH_ATTRIBUTE (nothing written) when wrong. They run
// where `searchAttributes` is passed in `kinds`.

const kinds = [searchAttributes];

const handlers = {
  price: async (_: HandlerContext<unknown>) => ({ total: 120, currency: 'EUR' }),
  review: async (ctx: HandlerContext<unknown>) => {
    ctx.setAttributes({ reviewer: 'ann', approvedAt: 1_700_000_000_000 });
    return null;
  },
};

const order = workflow('order', 1)
  .handlers<typeof handlers>()
  .input<{ customerId: string; vip?: boolean }>()
  .task('price', { handler: 'price' })
  .task('review', { handler: 'review' })
  .search('customerId', { type: 'string', from: 'input.customerId' })
  .search('vip', { type: 'boolean', from: 'input.vip' })
  .search('total', { type: 'number', from: 'outputs.price.total' })
  .search('reviewer', { type: 'string' })
  .search('approvedAt', { type: 'time' })
  .build();

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return isStepfoldError(e) ? e.code : `untyped: ${String(e)}`;
  }
  return undefined;
}

describe('search attributes in the reducer', () => {
  it('reads input paths at start and output paths once their step completes', () => {
    const h = createHarness(order, { kinds }).start({ customerId: 'c-42' });
    expect(h.snapshot.search).toEqual({ customerId: 'c-42' });
    h.complete('price', { total: 120, currency: 'EUR' });
    expect(h.snapshot.search).toEqual({ customerId: 'c-42', total: 120 });
  });

  it('applies what the handler set with its completed result, null clearing a value', () => {
    const h = createHarness(order, { kinds }).start({ customerId: 'c-1', vip: true });
    h.complete('price', { total: 5, currency: 'EUR' });
    h.complete('review', null, { search: { reviewer: 'bob', approvedAt: 10 } });
    expect(h.snapshot.search).toEqual({
      customerId: 'c-1',
      vip: true,
      total: 5,
      reviewer: 'bob',
      approvedAt: 10,
    });
    const s = step(order, h.snapshot, { type: 'tick', at: h.snapshot.updatedAt + 1 }, { kinds });
    expect(s.search).toBe(h.snapshot.search);
  });

  it('refuses a start whose input holds another type, writing nothing', () => {
    expect(
      codeOf(() =>
        step(order, null, { type: 'start', at: 1, id: 'o-1', input: { customerId: 42 } }, { kinds }),
      ),
    ).toBe('INVALID_SEARCH_ATTRIBUTE');
  });

  it('refuses a result that sets an undeclared, path-fed or mistyped attribute', () => {
    const h = createHarness(order, { kinds }).start({ customerId: 'c-1' });
    const s = h.snapshot;
    const done = (search: Record<string, unknown>) =>
      step(
        order,
        s,
        {
          type: 'task.completed',
          at: 5,
          step: 'price',
          attempt: 1,
          output: { total: 1 },
          search: search as never,
        },
        { kinds },
      );
    expect(codeOf(() => done({ nope: 'x' }))).toBe('INVALID_SEARCH_ATTRIBUTE');
    expect(codeOf(() => done({ customerId: 'other' }))).toBe('INVALID_SEARCH_ATTRIBUTE');
    expect(codeOf(() => done({ approvedAt: 1.5 }))).toBe('INVALID_SEARCH_ATTRIBUTE');
    expect(codeOf(() => done({ reviewer: { a: 1 } }))).toBe('INVALID_SEARCH_ATTRIBUTE');
    expect(s.search).toEqual({ customerId: 'c-1' });
  });

  it('refuses a snapshot whose search field is not attribute values', () => {
    const s = {
      ...createHarness(order, { kinds }).start({ customerId: 'c' }).snapshot,
      search: { a: [1] },
    } as unknown as Snapshot;
    const done = {
      type: 'task.completed',
      at: s.updatedAt + 1,
      step: 'price',
      attempt: 1,
      output: {},
    } as const;
    expect(codeOf(() => step(order, s, done, { kinds }))).toBe('INVALID_SNAPSHOT');
  });

  it('checks declarations where searchAttributes runs them: names, types, paths and steps', () => {
    const bad = (search: unknown) =>
      codeOf(() => {
        const w = defineWorkflow({
          name: 'w',
          version: 1,
          start: 'a',
          search: search as never,
          steps: { a: { kind: 'succeed' } },
        });
        step(w, null, { type: 'start', at: 1, id: 'w-1', input: {} }, { kinds });
      });
    expect(bad({ ok: { type: 'string', from: 'input.x' } })).toBeUndefined();
    expect(bad({ status: { type: 'string' } })).toBe('INVALID_DEFINITION');
    expect(bad({ '1x': { type: 'string' } })).toBe('INVALID_DEFINITION');
    expect(bad({ x: { type: 'date' } })).toBe('INVALID_DEFINITION');
    expect(bad({ x: { type: 'string', from: 'outputs.missing.y' } })).toBe('INVALID_DEFINITION');
    expect(bad({ x: { type: 'string', from: 'steps.a' } })).toBe('INVALID_DEFINITION');
  });
});

describe('search attributes through a runner', () => {
  it('a handler sets them, outputs feed them, and the store lists by them', async () => {
    const store = createMemoryStore();
    const runner = createRunner({ store, workflows: [order], handlers, kinds });
    await runner.start('order', 'o-1', { customerId: 'c-42' });
    await runner.start('order', 'o-2', { customerId: 'c-7' });
    const s = await store.load('o-1');
    expect(s?.search).toEqual({
      customerId: 'c-42',
      total: 120,
      reviewer: 'ann',
      approvedAt: 1_700_000_000_000,
    });
    const page = await store.list({ limit: 10, where: { customerId: 'c-42' } });
    expect(page.items.map((x) => x.id)).toEqual(['o-1']);
  });

  it('an output that feeds an attribute of another type fails the step for good', async () => {
    const store = createMemoryStore();
    const wrong = {
      ...handlers,
      price: async (_: HandlerContext<unknown>) => ({ total: 'lots', currency: 'EUR' }),
    } as unknown as typeof handlers;
    const runner = createRunner({ store, workflows: [order], handlers: wrong, kinds });
    const s = await runner.start('order', 'o-3', { customerId: 'c' });
    expect(s.status).toBe('failed');
    expect(s.steps['price']?.error?.code).toBe('INVALID_SEARCH_ATTRIBUTE');
  });

  it('ctx.setAttributes throws for an undeclared name, so the attempt fails', async () => {
    const store = createMemoryStore();
    const bad = {
      ...handlers,
      review: async (ctx: HandlerContext<unknown>) => {
        ctx.setAttributes({ nope: 1 });
        return null;
      },
    };
    const runner = createRunner({ store, workflows: [order], handlers: bad, kinds });
    const s = await runner.start('order', 'o-4', { customerId: 'c' });
    expect(s.steps['review']?.error?.code).toBe('INVALID_SEARCH_ATTRIBUTE');
  });
});

describe('search attributes without kinds: [searchAttributes]', () => {
  it('are refused by createRunner, step and the harness with KIND_NOT_LOADED, naming the value', () => {
    const runner = () => createRunner({ store: createMemoryStore(), workflows: [order], handlers } as never);
    for (const f of [
      runner,
      () => step(order, null, { type: 'start', at: 1, id: 'o-1', input: { customerId: 'c' } }),
      () => createHarness(order).start({ customerId: 'c' }),
    ]) {
      let error: unknown;
      try {
        f();
      } catch (e) {
        error = e;
      }
      expect(error).toMatchObject({ code: 'KIND_NOT_LOADED' });
      expect(String(error)).toContain('workflow order has search attributes');
      expect(String(error)).toContain('kinds: [searchAttributes]');
    }
  });

  it('leave a workflow that declares none untouched; ctx.setAttributes there is KIND_NOT_LOADED', async () => {
    const plain = workflow('plain', 1)
      .handlers<{ mark: (ctx: HandlerContext<unknown>) => null }>()
      .task('mark', { handler: 'mark' })
      .build();
    const mark = (ctx: HandlerContext<unknown>) => {
      ctx.setAttributes({ reviewer: 'ann' });
      return null;
    };
    const store = createMemoryStore();
    const runner = createRunner({ store, workflows: [plain], handlers: { mark } });
    const s = await runner.start('plain', 'p-1', undefined);
    expect(s.steps['mark']?.error?.code).toBe('KIND_NOT_LOADED');
    expect(s.search).toBeUndefined();
    const h = await createHarness(plain).start(undefined).run({ mark });
    expect(h.snapshot.steps['mark']?.error?.code).toBe('KIND_NOT_LOADED');
  });
});

describe('search attributes beside a payload codec', () => {
  it('are kept in plaintext while the input is encrypted, so where still finds the instance', async () => {
    const codec = aesGcmCodec({ keys: { k1: crypto.getRandomValues(new Uint8Array(32)) } });
    const store = createMemoryStore();
    const runner = createRunner({ store, workflows: [order], handlers, kinds, codec });
    await runner.start('order', 'o-enc', { customerId: 'c-42' });
    await runner.start('order', 'o-other', { customerId: 'c-7' });
    // The store itself, not through the codec: the input is a sealed value, the attributes are not.
    const raw = await store.load('o-enc');
    expect(JSON.stringify(raw?.input)).not.toContain('c-42');
    expect(raw?.search).toMatchObject({ customerId: 'c-42', total: 120, reviewer: 'ann' });
    const page = await store.list({ limit: 10, where: { customerId: 'c-42' }, orderBy: 'total' });
    expect(page.items.map((x) => x.id)).toEqual(['o-enc']);
    expect((await runner.get('o-enc'))?.input).toEqual({ customerId: 'c-42' });
  });
});
