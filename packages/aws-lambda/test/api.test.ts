/**
 * The API Gateway handler, called with HTTP API (2.0) and REST API (1.0) events: what it writes,
 * what it answers, and the error shape and status of each kind of failure.
 */
import { createDynamoStore } from '@stepfold/store-dynamo';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLambdaApp } from '../src/index.js';
import { countRequests } from '../src/local/index.js';
import { clients, createHandlers, http, provision, workflows } from './support.js';

const c = clients();
let res: Awaited<ReturnType<typeof provision>>;
let app: ReturnType<typeof createLambdaApp>;
const pid = process.pid;

beforeAll(async () => {
  res = await provision(c, 'api');
  app = createLambdaApp({
    workflows,
    handlers: createHandlers([]),
    dynamodb: c.dynamodb,
    table: res.table,
    log: () => {},
  });
});
afterAll(async () => {
  await res?.drop();
});

/** A REST API (payload 1.0) proxy request. */
function rest(method: string, path: string, body?: unknown, query?: Record<string, string>) {
  return {
    resource: '/{proxy+}',
    path,
    httpMethod: method,
    headers: {},
    queryStringParameters: query ?? null,
    requestContext: { stage: 'prod' },
    body: body === undefined ? null : Buffer.from(JSON.stringify(body)).toString('base64'),
    isBase64Encoded: true,
  };
}
const parsed = (r: { body: string }) => JSON.parse(r.body);

describe('API Gateway handler', () => {
  it('a start is one PutItem and answers 201 with the snapshot written (no read back)', async () => {
    const count = countRequests(c.dynamodb);
    const r = await app.api(http('POST', `/workflows/order/instances/api-1-${pid}`, { sku: 'A', amount: 1 }));
    expect(r.statusCode).toBe(201);
    expect(r.headers['content-type']).toBe('application/json');
    expect(parsed(r)).toMatchObject({
      id: `api-1-${pid}`,
      status: 'running',
      input: { sku: 'A', amount: 1 },
    });
    expect(count.byCommand).toEqual({ PutItemCommand: 1 });
    count.reset();
    // The same start again: the instance exists (409, ALREADY_EXISTS), nothing written.
    const again = await app.api(
      http('POST', `/workflows/order/instances/api-1-${pid}`, { sku: 'A', amount: 1 }),
    );
    expect(again.statusCode).toBe(409);
    expect(parsed(again)).toEqual({ error: { code: 'ALREADY_EXISTS', message: expect.any(String) } });
  });

  it('a start reads its priority from the query: one that is no priority is 400, INVALID_OPTIONS, nothing written', async () => {
    const id = `api-prio-${pid}`;
    for (const priority of ['urgent', '', '-1', '1001']) {
      const r = await app.api(
        rest('POST', `/workflows/order/instances/${id}`, { sku: 'B', amount: 2 }, { priority }),
      );
      expect(r.statusCode).toBe(400);
      expect(parsed(r).error.code).toBe('INVALID_OPTIONS');
    }
    expect((await app.api(rest('GET', `/instances/${id}`))).statusCode).toBe(404);
  });

  it('REST API (1.0) events: base64 body, stage outside the path, signalId from the query', async () => {
    const id = `api-rest-${pid}`;
    expect(
      (await app.api(rest('POST', `/workflows/order/instances/${id}`, { sku: 'B', amount: 2 }))).statusCode,
    ).toBe(201);
    const got = await app.api(rest('GET', `/instances/${id}`));
    expect(got.statusCode).toBe(200);
    expect(parsed(got).id).toBe(id);
    // A signal no step listens for is the caller's mistake: 400, UNKNOWN_SIGNAL.
    const unknown = await app.api(rest('POST', `/instances/${id}/signals/note`, { text: 'hi' }));
    expect(unknown.statusCode).toBe(400);
    expect(parsed(unknown).error.code).toBe('UNKNOWN_SIGNAL');
    // At the approval (the sweep ran reserve-stock), one decision twice under one signalId applies once.
    await app.sweep();
    const approve = rest(
      'POST',
      `/instances/${id}/signals/approve`,
      { decision: 'approve' },
      { signalId: 'a-1' },
    );
    const first = await app.api(approve);
    expect(first.statusCode).toBe(200);
    const second = await app.api(approve);
    expect(second.statusCode).toBe(200);
    expect(parsed(second).version).toBe(parsed(first).version);
    expect(parsed(first).seenSignals).toContain('a-1');
  });

  it('HTTP API (2.0) with a named stage: the stage prefix is not part of the route', async () => {
    const id = `api-stage-${pid}`;
    const event = {
      ...http('POST', `/prod/workflows/reminder/instances/${id}`),
      requestContext: { stage: 'prod', http: { method: 'POST' } },
    };
    const r = await app.api(event);
    expect(r.statusCode).toBe(201);
    expect(parsed(r)).toMatchObject({ id, workflow: { name: 'reminder' } });
  });

  it('cancel and abort answer with the snapshot; a human decision without `decision` is 400 and writes nothing', async () => {
    const id = `api-cancel-${pid}`;
    await app.api(http('POST', `/workflows/order/instances/${id}`, { sku: 'C', amount: 3 }));
    const store = createDynamoStore({ client: c.dynamodb, table: res.table });
    // Bring it to the approval: the sweep runs the handed-off reserve-stock.
    await app.sweep();
    const before = await store.load(id);
    expect(before?.active).toEqual(['approve']);
    const bad = await app.api(http('POST', `/instances/${id}/signals/approve`, { maybe: true }));
    expect(bad.statusCode).toBe(400);
    expect(parsed(bad).error).toMatchObject({ code: 'INVALID_EVENT' });
    expect(await store.load(id)).toEqual(before);

    const cancelled = await app.api(http('POST', `/instances/${id}/cancel`, { reason: 'customer asked' }));
    expect(cancelled.statusCode).toBe(200);
    expect(parsed(cancelled)).toMatchObject({ reason: 'customer asked' });
    const other = `api-abort-${pid}`;
    await app.api(http('POST', `/workflows/reminder/instances/${other}`));
    const aborted = await app.api(http('POST', `/instances/${other}/abort`));
    expect(aborted.statusCode).toBe(200);
    expect(parsed(aborted).status).toBe('aborted');
  });

  it('a decision that arrives after the instance ended is 409 INSTANCE_FINISHED and writes nothing', async () => {
    const id = `api-late-${pid}`;
    await app.api(http('POST', `/workflows/order/instances/${id}`, { sku: 'L', amount: 1 }));
    const aborted = await app.api(http('POST', `/instances/${id}/abort`));
    expect(parsed(aborted).status).toBe('aborted');
    const count = countRequests(c.dynamodb);
    const late = await app.api(http('POST', `/instances/${id}/signals/approve`, { decision: 'approve' }));
    expect(late.statusCode).toBe(409);
    expect(parsed(late)).toEqual({
      error: { code: 'INSTANCE_FINISHED', message: expect.stringMatching(/has finished \(aborted\)/) },
    });
    // One read to learn the instance's state; no write.
    expect(count.byCommand).toEqual({ GetItemCommand: 1 });
    // The same signal under a signalId: the same answer.
    const again = await app.api({
      ...http('POST', `/instances/${id}/signals/approve`, { decision: 'approve' }),
      rawQueryString: 'signalId=late-1',
    });
    expect([again.statusCode, parsed(again).error.code]).toEqual([409, 'INSTANCE_FINISHED']);
  });

  it('a wrong method is 405 with the method the path takes in `Allow`', async () => {
    const r = await app.api(http('PUT', `/instances/x-${pid}/cancel`));
    expect(r.statusCode).toBe(405);
    expect(r.headers['allow']).toBe('POST');
  });

  it('errors: unknown instance 404, bad id 400, unknown workflow or route 404, wrong method 405, body not JSON 400', async () => {
    const cases: Array<[ReturnType<typeof http>, number, string]> = [
      [http('GET', `/instances/missing-${pid}`), 404, 'NOT_FOUND'],
      [http('POST', `/instances/missing-${pid}/signals/approve`, { decision: 'approve' }), 404, 'NOT_FOUND'],
      [http('POST', '/workflows/order/instances/bad%20id'), 400, 'INVALID_ID'],
      [http('POST', `/workflows/no-such/instances/x-${pid}`), 404, 'NO_ROUTE'],
      [http('GET', '/nowhere'), 404, 'NO_ROUTE'],
      [http('DELETE', `/instances/x-${pid}`), 405, 'METHOD_NOT_ALLOWED'],
      [
        { ...http('POST', `/workflows/order/instances/json-${pid}`), body: '{not json' },
        400,
        'INVALID_INPUT',
      ],
    ];
    for (const [event, status, code] of cases) {
      const r = await app.api(event);
      expect([r.statusCode, parsed(r).error.code]).toEqual([status, code]);
    }
  });
});
