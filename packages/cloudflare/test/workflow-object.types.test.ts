import { type Handler, workflow } from '@stepfold/engine';
import { describe, expectTypeOf, it } from 'vitest';
import type { DurableState } from '../src/platform.js';
import { createWorkflowHandler } from '../src/worker-handler.js';
import { createWorkflowObject, type WorkflowObject } from '../src/workflow-object.js';

// Each @ts-expect-error line is a mistake the compiler must see (tsc fails if a line stops being
// an error). The calls sit in a function that is never called.

const order = workflow('order', 1)
  .task('reserve', { handler: 'reserve' })
  .task('charge', { handler: 'charge' })
  .build();
const handlers = {
  reserve: async () => ({ ok: true }),
  charge: async () => ({ ok: true }),
} satisfies Record<string, Handler>;

describe('createWorkflowObject is typed by its workflows and its env', () => {
  it('checks the handlers against the definitions and refuses a store of its own', () => {
    const compileOnly = () => {
      createWorkflowObject({ workflows: [order], handlers });
      // @ts-expect-error the charge handler is missing
      createWorkflowObject({ workflows: [order], handlers: { reserve: handlers.reserve } });
      // @ts-expect-error the object brings its own store
      createWorkflowObject({ workflows: [order], handlers, store: {} });
    };
    expectTypeOf(compileOnly).toBeFunction();
  });

  it('types env from the options function, and the class from env', () => {
    interface Env {
      API_KEY: string;
    }
    const Instance = createWorkflowObject((env: Env, ctx: DurableState) => {
      expectTypeOf(env.API_KEY).toBeString();
      expectTypeOf(ctx.storage.getAlarm).returns.resolves.toEqualTypeOf<number | null>();
      return { workflows: [order], handlers };
    });
    expectTypeOf<InstanceType<typeof Instance>>().toEqualTypeOf<WorkflowObject<Env>>();
    const compileOnly = (ctx: DurableState) => {
      new Instance(ctx, { API_KEY: 'k' });
      // @ts-expect-error API_KEY must be a string
      new Instance(ctx, { API_KEY: 1 });
    };
    expectTypeOf(compileOnly).toBeFunction();
  });

  it('the handler takes definitions or names', () => {
    createWorkflowHandler({ workflows: [order, 'refund'] });
    // @ts-expect-error workflows is required
    const compileOnly = () => createWorkflowHandler({ binding: 'WORKFLOWS' });
    expectTypeOf(compileOnly).toBeFunction();
  });
});
