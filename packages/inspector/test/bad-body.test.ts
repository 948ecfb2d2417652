import { describe, expect, it } from 'vitest';
import { BEARER, setup, version } from './ops-setup.js';

// Found by `pnpm fuzz` (inspector): a post whose body claims to be a form but is none (a torn
// multipart) made parseBody throw, and the inspector answered 500. It is the client's 400 now.

describe('an action post with a body that is not a form', () => {
  it('is a 400 and changes nothing', async () => {
    const { app, store } = await setup();
    const before = JSON.stringify(await store.load('a-1'));
    const v = await version(store, 'a-1');
    const res = await app.request('/ops/instances/a-1/cancel', {
      method: 'POST',
      headers: { ...BEARER, 'content-type': 'multipart/form-data; boundary=y' },
      body: `--x\r\n{"version":"${v}"}\r\n--`,
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('nothing was changed');
    expect(JSON.stringify(await store.load('a-1'))).toBe(before);
  });
});
