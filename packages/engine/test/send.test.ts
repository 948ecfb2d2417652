import { describe, expect, it } from 'vitest';
import { compileWorkflow } from '../src/definition/compile.js';
import { createRunner, defineWorkflow, workflow } from '../src/index.js';
import { createRegistry } from '../src/runner/registry.js';
import { acceptingDefinitions } from '../src/runner/send.js';
import { createMemoryStore } from '../src/store/memory-store.js';

// runner.send on a store without an inbox is signal with `wait: 'write'`; on one with an inbox it
// is refused before writing for what signal would refuse (see store-postgres' send tests for the
// inbox itself). The accept list names the definitions the statement may append under.

const waits = defineWorkflow({
  name: 'waits',
  version: 1,
  start: 'go',
  steps: {
    go: { kind: 'wait', signal: 'go', next: 'hit' },
    hit: { kind: 'task', handler: 'hit' },
  },
});
const waitsV2 = defineWorkflow({ ...waits, version: 2, steps: { go: { kind: 'wait', signal: 'other' } } });
const buffers = defineWorkflow({
  name: 'buffers',
  version: 1,
  start: 'go',
  acceptUnknownSignals: true,
  steps: { go: { kind: 'wait', signal: 'go' } },
});
const typed = workflow('typed', 1)
  .signal('go', {
    '~standard': {
      version: 1,
      vendor: 'test',
      validate: (v: unknown) =>
        typeof v === 'number' ? { value: v } : { issues: [{ message: 'a number', path: [] }] },
    },
  })
  .wait('go', { signal: 'go' })
  .build();

describe('runner.send', () => {
  it('without an inbox, applies the signal as signal does and resolves once written', async () => {
    const ran: string[] = [];
    // A store without the capability (the memory store has it: hide it).
    const store = { ...createMemoryStore(), inbox: undefined };
    const runner = createRunner({
      store,
      workflows: [waits],
      handlers: {
        hit: ({ instanceId }) => {
          ran.push(instanceId);
          return null;
        },
      },
    });
    await runner.start('waits', 'a');
    const sent = await runner.send('a', 'go', { x: 1 });
    expect(sent).toMatchObject({ status: 'applied', snapshot: { id: 'a', version: 2 } });
    await runner.idle();
    expect(ran).toEqual(['a']);
    expect((await store.load('a'))?.status).toBe('completed');
    // A finished instance ignores signals, as with signal: nothing written; the result says so.
    const version = (await store.load('a'))?.version;
    await expect(runner.send('a', 'go')).resolves.toEqual({ status: 'finished', finished: 'completed' });
    await expect(runner.send('a', 'go', undefined, { rejectFinished: true })).rejects.toMatchObject({
      code: 'INSTANCE_FINISHED',
      status: 'completed',
    });
    expect((await store.load('a'))?.version).toBe(version);
    await runner.start('waits', 'b');
    await expect(runner.send('b', 'nope')).rejects.toMatchObject({ code: 'UNKNOWN_SIGNAL' });
    await expect(runner.send('missing', 'go')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('accepts the definitions listening for the name (or buffering any) whose schema takes the payload', async () => {
    const registry = createRegistry({
      workflows: [waits, waitsV2, buffers, typed],
      handlerNames: new Set(['hit']),
    });
    const key = (d: Parameters<typeof compileWorkflow>[0]) => {
      const c = compileWorkflow(d);
      return `${c.definition.name}@${c.definition.version}@${c.hash}`;
    };
    expect(await acceptingDefinitions(registry, 'go', 1)).toEqual([key(waits), key(buffers), key(typed)]);
    expect(await acceptingDefinitions(registry, 'go', 'one')).toEqual([key(waits), key(buffers)]);
    expect(await acceptingDefinitions(registry, 'other', null)).toEqual([key(waitsV2), key(buffers)]);
  });

  it('tells queued from finished from the inbox write alone: no read of the instance', async () => {
    const memory = createMemoryStore();
    let loads = 0;
    const store = {
      ...memory,
      load: (id: string) => {
        loads++;
        return memory.load(id);
      },
    };
    const runner = createRunner({ store, workflows: [waits], handlers: { hit: () => null }, execute: false });
    await runner.start('waits', 'a');
    await runner.start('waits', 'b');
    await runner.cancel('b');
    loads = 0;
    await expect(runner.send('a', 'go')).resolves.toEqual({ status: 'queued' });
    await expect(runner.send('b', 'go')).resolves.toEqual({ status: 'finished', finished: 'cancelled' });
    await expect(runner.send('b', 'go', null, { rejectFinished: true })).rejects.toMatchObject({
      code: 'INSTANCE_FINISHED',
      id: 'b',
      status: 'cancelled',
    });
    expect(loads).toBe(0);
    expect((await memory.load('b'))?.version).toBe(2);
    // A duplicate signal id on the signal's own path (no inbox): applied to nothing, said so.
    const direct = createRunner({
      store: { ...memory, inbox: undefined },
      workflows: [buffers],
      handlers: {},
      execute: false,
    });
    await direct.start('buffers', 'c');
    await expect(direct.send('c', 'x', 1, { signalId: 's-1' })).resolves.toMatchObject({ status: 'applied' });
    const again = await direct.send('c', 'x', 1, { signalId: 's-1' });
    expect(again).toMatchObject({ status: 'unchanged', snapshot: { id: 'c', version: 2 } });
  });
});
