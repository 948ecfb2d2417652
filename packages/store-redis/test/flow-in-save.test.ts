import { createRunner, flowControl, type Store, workflow } from '@stepfold/engine';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedisStore } from '../src/index.js';
import { dropFlow } from './flow-suite.js';
import { testClient, uniquePrefix } from './server.js';

// The flow work of a save in the save's own script (one server): a flow-limited workflow's round
// trips, counted on the client, with the store's inSave (and inCreate) and with a wrapper that
// hides them (the runner then calls acquire before the write and release after it).

const client = testClient();
const prefixes: string[] = [];
afterAll(async () => {
  for (const p of prefixes) await dropFlow(client, p);
  await client.quit();
});

/**
 * Counts the commands the client sends while `run` runs, less an EVAL: one follows an EVALSHA only
 * when the server answered NOSCRIPT (another test file's SCRIPT FLUSH), and runs that same script once.
 */
async function roundTrips(run: () => Promise<unknown>): Promise<number> {
  const send = client.sendCommand.bind(client);
  let n = 0;
  client.sendCommand = (...args: Parameters<typeof send>) => {
    if ((args[0] as { name: string }).name !== 'eval') n++;
    return send(...args);
  };
  try {
    await run();
  } finally {
    client.sendCommand = send;
  }
  return n;
}

/** The store as a wrapper that passes neither `SaveOptions.flow` nor `CreateOptions.flow` on sees it. */
function withoutFlowWrites(store: Store): Store {
  const flow = store.flow!;
  return Object.assign(Object.create(store), {
    flow: {
      acquire: flow.acquire.bind(flow),
      release: flow.release.bind(flow),
      renew: flow.renew.bind(flow),
      list: flow.list.bind(flow),
    },
  });
}

const limit = { key: 'input.customer', limit: 1 } as const;
/** The limited task first: the create takes its slot (flow-in-create.test.ts has more of that). */
const first = workflow('in-save-first', 1)
  .input<{ customer: string }>()
  .task('charge', { handler: 'charge', concurrency: limit })
  .build();
/** The limited task second: the save that dispatches it takes its slot. */
const second = workflow('in-save-second', 1)
  .input<{ customer: string }>()
  .task('check', { handler: 'charge' })
  .task('charge', { handler: 'charge', concurrency: limit })
  .build();

/** A fresh store on one server, as is or without inSave and inCreate, and a runner on it. */
function runnerOn(hide: boolean) {
  const prefix = uniquePrefix('flow-in-save');
  prefixes.push(prefix);
  const redis = createRedisStore({ client, prefix });
  const store = hide ? withoutFlowWrites(redis) : redis;
  const runner = createRunner({
    store,
    workflows: [first, second],
    kinds: [flowControl],
    handlers: { charge: () => 'ok' },
  });
  return { redis, runner };
}

describe('redis adapter: flow work in the save (one server)', () => {
  it('says so: flow.inSave', () => {
    expect(createRedisStore({ client, prefix: uniquePrefix('flow-in-save') }).flow?.inSave).toBe(true);
  });

  it('a limited task costs its writes alone: the take and the release in the saves', async () => {
    /** Round trips of one run of `name` (a fresh store, scripts loaded), with or without the flow writes. */
    const count = async (name: 'in-save-first' | 'in-save-second', hide: boolean) => {
      const { redis, runner } = runnerOn(hide);
      await redis.setup(); // no NOSCRIPT retry counted
      const n = await roundTrips(async () => {
        expect((await runner.start(name, 'o-1', { customer: 'c-1' })).status).toBe('completed');
      });
      // Released: the customer's next order runs at once.
      expect((await runner.start(name, 'o-2', { customer: 'c-1' })).status).toBe('completed');
      return n;
    };
    // First step: acquire, create, save, release; in the writes: the create takes, the save releases.
    expect([await count('in-save-first', true), await count('in-save-first', false)]).toEqual([4, 2]);
    // Second step: create, acquire, save, save, release; in the save: its three writes.
    expect([await count('in-save-second', true), await count('in-save-second', false)]).toEqual([5, 3]);
  });
});
