/**
 * The Worker's fetch in Node, over a namespace that records what reaches it: which object a
 * request goes to, what it receives, and what is answered without reaching any object.
 */
import { describe, expect, it, vi } from 'vitest';
import type { DurableNamespace } from '../src/platform.js';
import { createWorkflowHandler } from '../src/worker-handler.js';

/** A namespace whose objects echo what they receive. */
function namespace() {
  const seen: Array<{ object: string; method: string; url: string; body: string }> = [];
  const ns: DurableNamespace<string> = {
    idFromName: (name) => `id:${name}`,
    get: (id) => ({
      async fetch(request) {
        seen.push({ object: id, method: request.method, url: request.url, body: await request.text() });
        return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
      },
    }),
  };
  return { ns, seen };
}

const send = (
  handler: ReturnType<typeof createWorkflowHandler>,
  env: unknown,
  method: string,
  url: string,
  body?: string,
) => handler.fetch(new Request(url, { method, ...(body === undefined ? {} : { body }) }), env);

describe('createWorkflowHandler', () => {
  it('sends a request to the object named after its instance id, the prefix removed, the body intact', async () => {
    const { ns, seen } = namespace();
    const handler = createWorkflowHandler({ workflows: ['order'], binding: 'FLOWS', prefix: '/api/' });
    const res = await send(
      handler,
      { FLOWS: ns },
      'POST',
      'https://x.test/api/instances/o%2F1/signals/ok?signalId=s-1',
      '{"a":1}',
    );
    expect(res.status).toBe(200);
    expect(seen).toEqual([
      {
        object: 'id:o/1',
        method: 'POST',
        url: 'https://x.test/instances/o%2F1/signals/ok?signalId=s-1',
        body: '{"a":1}',
      },
    ]);
  });

  it('answers bad paths, methods and ids itself, reaching no object', async () => {
    const { ns, seen } = namespace();
    const get = vi.spyOn(ns, 'get');
    const handler = createWorkflowHandler({ workflows: ['order'] });
    const cases: Array<[string, string, number, string]> = [
      ['POST', 'https://x.test/workflows/refund/instances/r-1', 404, 'NO_ROUTE'],
      ['GET', 'https://x.test/nothing/here', 404, 'NO_ROUTE'],
      ['PUT', 'https://x.test/instances/o-1', 405, 'METHOD_NOT_ALLOWED'],
      ['GET', `https://x.test/instances/${'x'.repeat(201)}`, 400, 'INVALID_ID'],
      ['GET', 'https://x.test/instances/%E0%A4%A', 400, 'INVALID_ID'],
    ];
    for (const [method, url, status, code] of cases) {
      const res = await send(handler, { WORKFLOWS: ns }, method, url);
      expect([res.status, ((await res.json()) as { error: { code: string } }).error.code]).toEqual([
        status,
        code,
      ]);
    }
    expect(get).not.toHaveBeenCalled();
    expect(seen).toEqual([]);
  });

  it('a missing binding is a 500 that names no internals; the cause goes to the log', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {});
    const handler = createWorkflowHandler({ workflows: ['order'] });
    const res = await send(handler, {}, 'GET', 'https://x.test/instances/o-1');
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({
      error: { code: 'INTERNAL', message: 'internal error (see the Worker logs)' },
    });
    expect(String(log.mock.calls[0]?.[1])).toMatch(/env\.WORKFLOWS is not a Durable Object namespace/);
    log.mockRestore();
  });
});
