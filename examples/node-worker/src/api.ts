/**
 * The worker's HTTP API (Hono). Every write answers as soon as the request's event is durably
 * written — the snapshot in the response is the one that write stored — and the handlers that
 * write dispatched go on running in this process (GET the instance to follow them).
 *
 *   POST /workflows/:name/instances/:id          body = input                    201
 *   POST /instances/:id/signals/:name[?signalId] body = payload                  202
 *   POST /instances/:id/decision                 { decision: approve|reject }    202
 *   POST /instances/:id/cancel | /abort          { reason? }                     202
 *   POST /instances/:id/requeue                  { step?, inputPatch? }          202
 *   GET  /instances/:id                                                          200
 *   GET  /instances[?status&workflow&limit&cursor]                               200
 *
 * Errors: `{ error: { code, message, issues? } }`, the code being the engine error's stable code.
 */
import {
  assertValidId,
  errorKind,
  HTTP_STATUS,
  isStepfoldError,
  NotFoundError,
  type Runner,
  type RunnerMessage,
  type Snapshot,
  type Status,
  type Store,
  ValidationError,
  type WorkflowDefinition,
} from '@stepfold/engine';
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** An error of the HTTP layer itself, with a code of its own. */
export class HttpError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const STATUSES: readonly Status[] = [
  'running',
  'waiting',
  'compensating',
  'completed',
  'failed',
  'cancelled',
  'aborted',
  'dlq',
];

/** What the API needs from the worker. */
export interface ApiOptions {
  runner: Runner;
  store: Store;
  workflows: readonly WorkflowDefinition[];
}

const invalid = (message: string, path: string): never => {
  throw new ValidationError('INVALID_EVENT', message, [{ path, message }]);
};

/** The body as JSON (`undefined` when empty). */
async function readJson(c: Context): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ValidationError('INVALID_EVENT', 'request body is not valid JSON', [
      { path: 'body', message: (e as Error).message },
    ]);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSON object body with only the given optional keys (empty body = `{}`). */
async function readObject(
  c: Context,
  keys: Record<string, (v: unknown) => boolean>,
): Promise<Record<string, unknown>> {
  const body = (await readJson(c)) ?? {};
  if (!isObject(body)) return invalid('body must be a JSON object', 'body');
  for (const k of Object.keys(body)) {
    if (!Object.hasOwn(keys, k)) invalid(`unknown field "${k}"`, `body.${k}`);
    else if (!keys[k]!(body[k])) invalid(`field "${k}" has the wrong type`, `body.${k}`);
  }
  return body;
}

const isString = (v: unknown) => typeof v === 'string';

function idParam(c: Context, name = 'id', what = 'instance id'): string {
  const v = c.req.param(name);
  assertValidId(v, what);
  return v;
}

export function createApi(o: ApiOptions): Hono {
  const { runner, store } = o;
  // Every write answers once its event is stored; the worker runs the handlers it dispatched.
  const send = (m: RunnerMessage) => runner.handle({ ...m, wait: 'write' });
  const definitions = new Map(o.workflows.map((w) => [`${w.name}@${w.version}`, w]));
  const served = new Set(o.workflows.map((w) => w.name));
  const app = new Hono();

  const reply = (c: Context, r: { snapshot: Snapshot; written: boolean }, status: 201 | 202) =>
    c.json(r.snapshot, r.written ? status : 200, { 'stepfold-written': String(r.written) });

  app.use(
    bodyLimit({
      maxSize: 1024 * 1024,
      onError: (c) => c.json({ error: { code: 'BODY_TOO_LARGE', message: 'request body over 1 MiB' } }, 413),
    }),
  );

  app.post('/workflows/:name/instances/:id', async (c) => {
    const workflow = idParam(c, 'name', 'workflow name');
    // A name this API does not serve is a path to nothing (404); the engine's UNKNOWN_WORKFLOW,
    // a 500, is kept for a deployment whose runner lacks a workflow its API offers.
    if (!served.has(workflow))
      throw new HttpError(404, 'NO_ROUTE', `no workflow ${JSON.stringify(workflow)} here`);
    const id = idParam(c);
    const input = await readJson(c);
    return reply(c, await send({ type: 'start', workflow, id, input }), 201);
  });

  app.post('/instances/:id/signals/:name', async (c) => {
    const id = idParam(c);
    const name = idParam(c, 'name', 'signal name');
    const signalId = c.req.query('signalId');
    if (signalId !== undefined) assertValidId(signalId, 'signalId');
    const payload = await readJson(c);
    return reply(
      c,
      await send({ type: 'signal', id, name, payload, ...(signalId === undefined ? {} : { signalId }) }),
      202,
    );
  });

  app.post('/instances/:id/decision', async (c) => {
    const id = idParam(c);
    const body = await readObject(c, {
      decision: (v) => v === 'approve' || v === 'reject',
      comment: isString,
      signalId: isString,
    });
    if (body['decision'] === undefined)
      invalid('body must be { decision: "approve" | "reject", comment? }', 'body.decision');
    const s = await runner.get(id);
    if (!s) throw new NotFoundError(id);
    const def = definitions.get(`${s.workflow.name}@${s.workflow.version}`);
    const human = s.active.map((step) => def?.steps[step]).find((step) => step?.kind === 'human');
    if (human?.kind !== 'human') {
      throw new HttpError(
        409,
        'NOT_WAITING_FOR_DECISION',
        `instance ${JSON.stringify(id)} is not waiting for a decision`,
      );
    }
    const { signalId, ...payload } = body;
    if (signalId !== undefined) assertValidId(signalId, 'signalId');
    const name = human.signal ?? human.id;
    const dedup = signalId === undefined ? {} : { signalId: signalId as string };
    return reply(c, await send({ type: 'signal', id, name, payload, ...dedup }), 202);
  });

  for (const verb of ['cancel', 'abort'] as const) {
    app.post(`/instances/:id/${verb}`, async (c) => {
      const id = idParam(c);
      const { reason } = await readObject(c, { reason: isString });
      return reply(
        c,
        await send({ type: verb, id, ...(reason === undefined ? {} : { reason: reason as string }) }),
        202,
      );
    });
  }

  app.post('/instances/:id/requeue', async (c) => {
    const id = idParam(c);
    const body = await readObject(c, { step: isString, inputPatch: isObject });
    if (body['step'] !== undefined) assertValidId(body['step'], 'step');
    const requeue = body as { step?: string; inputPatch?: Record<string, unknown> };
    return reply(c, await send({ type: 'requeue', id, ...requeue }), 202);
  });

  app.get('/instances/:id', async (c) => {
    const id = idParam(c);
    const s = await runner.get(id);
    if (!s) throw new NotFoundError(id);
    return c.json(s);
  });

  app.get('/instances', async (c) => {
    const { status, workflow, cursor } = c.req.query();
    const limit = Number(c.req.query('limit') ?? 20);
    if (status !== undefined && !STATUSES.includes(status as Status))
      invalid(`unknown status "${status}"`, 'status');
    if (workflow !== undefined) assertValidId(workflow, 'workflow name');
    if (cursor !== undefined) assertValidId(cursor, 'cursor');
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      invalid('limit must be an integer in 1..100', 'limit');
    const page = await store.list({
      limit,
      ...(status ? { status: status as Status } : {}),
      ...(workflow ? { workflow } : {}),
      ...(cursor ? { cursor } : {}),
    });
    return c.json({ items: page.items, cursor: page.cursor });
  });

  app.notFound((c) =>
    c.json({ error: { code: 'NO_ROUTE', message: `no route for ${c.req.method} ${c.req.path}` } }, 404),
  );

  app.onError((e, c) => {
    if (e instanceof HttpError) return c.json({ error: { code: e.code, message: e.message } }, e.status);
    if (isStepfoldError(e)) {
      // The engine's table gives the status, as it gives the CLI its exit code.
      const kind = errorKind(e);
      return c.json(
        { error: { code: e.code, message: e.message, ...(e.issues.length ? { issues: e.issues } : {}) } },
        kind === undefined ? 500 : HTTP_STATUS[kind],
      );
    }
    console.error(JSON.stringify({ event: 'http.error', error: e instanceof Error ? e.stack : String(e) }));
    return c.json({ error: { code: 'INTERNAL', message: 'internal error' } }, 500);
  });

  return app;
}
