import {
  createMemoryStore,
  createRunner,
  defineWorkflow,
  type HandlerContext,
  isStepfoldError,
  type,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';

// One handler table for the whole service: an API runner registers some workflows, a worker all
// of them, and both take the same table. Type-checked by scripts/typecheck-tests.mjs too.

const table = {
  reserve: async ({ input }: HandlerContext<{ sku: string }>) => ({ reservation: `R-${input.sku}` }),
  buildReport: async ({ input }: HandlerContext<{ team: string }>) => ({ title: `report ${input.team}` }),
};

const order = workflow('order', 1)
  .handlers<typeof table>()
  .input(type<{ sku: string }>())
  .task('reserve', { handler: 'reserve', input: { sku: 'input.sku' } })
  .build();
const report = workflow('report', 1)
  .handlers<typeof table>()
  .input(type<{ team: string }>())
  .task('build', { handler: 'buildReport', input: { team: 'input.team' } })
  .build();

describe('a handler table shared by runners of different workflows', () => {
  it('serves a runner that registers only some of its workflows, and one that registers all', async () => {
    const store = createMemoryStore();
    const api = createRunner({ store, workflows: [order], handlers: table });
    const worker = createRunner({ store, workflows: [order, report], handlers: table });
    expect((await api.client(order).start('o-1', { sku: 'BOOK' })).output).toEqual({
      reservation: 'R-BOOK',
    });
    expect((await worker.start('report', 'r-1', { team: 'ops' })).output).toEqual({ title: 'report ops' });
  });

  it('still does not compile when a name is misspelt: the right one is missing', () => {
    const store = createMemoryStore();
    const typeOnly = () => {
      // @ts-expect-error Property 'reserve' is missing ... required in type '{ reserve: "missing handler"; }'
      createRunner({ store, workflows: [order], handlers: { reserv: table.reserve } });
    };
    void typeOnly;
  });

  it('with strictHandlers, refuses a handler no workflow of the runner names: at compile time and at run time', () => {
    const store = createMemoryStore();
    const typeOnly = () => {
      // @ts-expect-error buildReport: not assignable to '"no workflow of this runner names this handler"'
      createRunner({ store, workflows: [order], strictHandlers: true, handlers: table });
    };
    void typeOnly;
    // A JSON definition's handlers are not known to the compiler: the run-time check names them.
    const json = defineWorkflow({
      name: 'json-order',
      version: 1,
      start: 'a',
      steps: { a: { kind: 'task', handler: 'reserve' } },
    });
    let refused: unknown;
    try {
      createRunner({ store, workflows: [json], strictHandlers: true, handlers: table });
    } catch (e) {
      refused = e;
    }
    expect(isStepfoldError(refused, 'UNKNOWN_HANDLER')).toBe(true);
    expect((refused as Error).message).toContain('buildReport');
    expect((refused as Error).message).not.toContain('- reserve');
    // Exactly the handlers named: accepted.
    const exact = createRunner({ store, workflows: [order, report], strictHandlers: true, handlers: table });
    expect(exact.workflows).toEqual(['order', 'report']);
  });
});
