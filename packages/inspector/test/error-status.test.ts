import {
  ERROR_KINDS,
  type ErrorCode,
  HTTP_STATUS,
  type Store,
  StoreUnavailableError,
  workflow,
} from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { dispatch, job, tall } from './fixtures.js';
import { BEARER, get, post, setup, version } from './ops-setup.js';

// The inspector answers an engine error with the status of its kind, from the engine's one table
// (the same table the CLI's exit codes come from), and names the code on the page.

/** The status the engine's table gives `code`. */
const statusOf = (code: ErrorCode) => HTTP_STATUS[ERROR_KINDS[code]];

describe('error statuses follow the engine’s error kinds', () => {
  it('NOT_FOUND 404, UNKNOWN_SIGNAL 400, PAST_PIVOT 409', async () => {
    const { app, store } = await setup();
    const missing = await post(app, '/instances/nobody-here/cancel', { version: '1' });
    expect(missing.status).toBe(statusOf('NOT_FOUND'));
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain('NOT_FOUND');

    const unknown = await post(app, '/instances/a-1/signal', {
      version: await version(store, 'a-1'),
      name: 'nope',
    });
    expect(unknown.status).toBe(statusOf('UNKNOWN_SIGNAL'));
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain('UNKNOWN_SIGNAL');

    const pivot = await post(app, '/instances/d-1/cancel', { version: await version(store, 'd-1') });
    expect(pivot.status).toBe(statusOf('PAST_PIVOT'));
    expect(pivot.status).toBe(409);
  });

  it('STORE_UNAVAILABLE 503', async () => {
    const { store } = await setup();
    const down: Store = new Proxy(store, {
      get: (target, key, receiver) =>
        key === 'load'
          ? () => Promise.reject(new StoreUnavailableError('the database is down'))
          : Reflect.get(target, key, receiver),
    });
    const { app: broken } = await setup({ store: down });
    const r = await broken.request('/ops/instances/a-1', { headers: BEARER });
    expect(r.status).toBe(statusOf('STORE_UNAVAILABLE'));
    expect(r.status).toBe(503);
    expect(await r.text()).toContain('STORE_UNAVAILABLE');
  });

  it('DEFINITION_HASH_MISMATCH is a deployment fault (500), not a conflict, and writes nothing', async () => {
    // The inspector deployed with approval v1 changed under the same version.
    const changed = workflow('approval', 1)
      .task('prepare', { handler: 'prepare' })
      .human('manager')
      .task('pay', { handler: 'pay', input: { amount: 'input.amount' } })
      .wait('receipt', { signal: 'receipt' })
      .task('archive', { handler: 'pay' })
      .build();
    const { app, store } = await setup();
    const { app: redeployed } = await setup({ store, workflows: [changed, job, dispatch, tall] });
    const v = await version(store, 'a-1');
    expect(await get(app, '/instances/a-1')).toContain('a-1');
    const r = await post(redeployed, '/instances/a-1/decide', {
      version: v,
      step: 'manager',
      decision: 'approve',
    });
    expect(r.status).toBe(statusOf('DEFINITION_HASH_MISMATCH'));
    expect(r.status).toBe(500);
    expect(await r.text()).toContain('DEFINITION_HASH_MISMATCH');
    expect(await version(store, 'a-1')).toBe(v);
  });

  it('an instance whose definition the inspector lacks is refused with the definition kind’s status', async () => {
    const { app, store } = await setup({ workflows: [job, dispatch, tall] });
    const v = await version(store, 'a-1');
    const r = await post(app, '/instances/a-1/cancel', { version: v });
    expect(r.status).toBe(HTTP_STATUS.definition);
    expect(await version(store, 'a-1')).toBe(v);
  });
});
