/**
 * Callback tokens through the API Gateway handler on DynamoDB (moto): a handler mails a link to a
 * test outbox; a POST of its token applies the manager's decision once; a replay, a forged token,
 * an expired one and one of a step that has ended are refused with their codes and nothing written.
 */
import { callbackTokens, workflow } from '@stepfold/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLambdaApp } from '../src/index.js';
import { countRequests } from '../src/local/index.js';
import { clients, http, provision } from './support.js';

const c = clients();
let res: Awaited<ReturnType<typeof provision>>;
let app: ReturnType<typeof createLambdaApp>;
const pid = process.pid;
const outbox: string[] = [];
let now = Date.now();

const expense = workflow('expense', 1)
  .task('mail', { handler: 'mail' })
  .human('manager', { timeoutMs: 3_600_000 })
  .task('pay', { handler: 'pay' })
  .build();

beforeAll(async () => {
  res = await provision(c, 'callbacks');
  app = createLambdaApp({
    workflows: [expense],
    handlers: {
      mail: async (ctx) => {
        outbox.push(`https://example.test/callbacks/${await ctx.callback('manager', { ttlMs: 600_000 })}`);
        return null;
      },
      pay: () => ({ paid: true }),
    },
    callbacks: callbackTokens({ keys: { k1: 'a-test-secret-of-at-least-32-bytes!!' } }),
    clock: () => now,
    dynamodb: c.dynamodb,
    table: res.table,
    log: () => {},
  });
});
afterAll(async () => {
  await res?.drop();
});

const parsed = (r: { body: string }) => JSON.parse(r.body);
/** The path of the last link mailed. */
const lastLink = () => new URL(outbox.at(-1)!).pathname;

describe('callback tokens through the API Gateway handler', () => {
  it('a POST of the mailed token applies the decision once; a replay is a 409 and writes nothing', async () => {
    await app.runner.start('expense', `cb-1-${pid}`);
    const link = lastLink();
    const count = countRequests(c.dynamodb);
    const r = await app.api(http('POST', link, { decision: 'approve', by: 'ana' }));
    expect(r.statusCode).toBe(200);
    expect(parsed(r).steps.manager).toMatchObject({
      status: 'completed',
      output: { decision: 'approve', by: 'ana' },
    });
    const writes = () =>
      Object.entries(count.byCommand)
        .filter(([k]) => /Put|Update|Delete|Transact|BatchWrite/.test(k))
        .reduce((n, [, v]) => n + v, 0);
    expect(writes()).toBeGreaterThan(0);
    count.reset();
    const again = await app.api(http('POST', link, { decision: 'reject' }));
    expect(again.statusCode).toBe(409);
    expect(parsed(again).error.code).toBe('STEP_NOT_WAITING');
    expect(writes()).toBe(0);
  });

  it('a forged token is a 400, an expired one a 409, neither writes', async () => {
    await app.runner.start('expense', `cb-2-${pid}`);
    const link = lastLink();
    const [prefix, body, mac] = link.split('/').at(-1)!.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${prefix}.${Buffer.from(JSON.stringify({ ...claims, e: now + 10 ** 9 })).toString('base64url')}.${mac}`;
    const count = countRequests(c.dynamodb);
    const bad = await app.api(http('POST', `/callbacks/${forged}`, { decision: 'approve' }));
    expect(bad.statusCode).toBe(400);
    expect(parsed(bad).error.code).toBe('CALLBACK_INVALID');
    now += 600_001;
    const late = await app.api(http('POST', link, { decision: 'approve' }));
    expect(late.statusCode).toBe(409);
    expect(parsed(late).error.code).toBe('CALLBACK_EXPIRED');
    expect(
      Object.keys(count.byCommand).filter((k) => /Put|Update|Delete|Transact|BatchWrite/.test(k)),
    ).toEqual([]);
    const stored = await app.runner.get(`cb-2-${pid}`);
    expect(stored?.steps['manager']?.status).toBe('active');
  });
});
