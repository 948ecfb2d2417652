import { createMemoryStore, createRunner, type Store } from '@stepfold/engine';
import { Hono } from 'hono';
import { createInspector, type InspectorOptions } from '../src/index.js';
import { approval, dispatch, HOSTILE, handlers, job, moreHandlers, tall } from './fixtures.js';

// The memory-store setup of the operations tests (app.request, no browser).

/** The inspector token of these tests. */
export const TOKEN = 'ops-token-0123456789';
/** A bearer header with {@link TOKEN}. */
export const BEARER = { Authorization: `Bearer ${TOKEN}` };
/** The clock of the "old" instances (for the time filter). */
export const JAN_2025 = Date.UTC(2025, 0, 15, 12, 0, 0);
/** Every definition the tests use. */
export const workflows = [approval, job, dispatch, tall];

/** A store with one instance per fixture (a-old dated January 2025) and the inspector mounted at /ops. */
export async function setup(options: Partial<InspectorOptions> = {}) {
  const store = createMemoryStore();
  const all = { ...handlers(), ...moreHandlers };
  const runner = createRunner({ store, workflows, handlers: all });
  const old = createRunner({ store, workflows, handlers: all, clock: () => JAN_2025 });
  await old.start('approval', 'a-old', { amount: 3 });
  await runner.start('approval', 'a-1', { amount: 42, note: HOSTILE.script });
  await runner.start('job', 'j-1', { size: 1 });
  await runner.start('dispatch', 'd-1', {});
  await runner.start('tall', 't-1', {});
  await runner.idle();
  const app = new Hono();
  app.route('/ops', createInspector({ store, workflows, auth: { token: TOKEN }, ...options }));
  return { store, runner, app };
}

/** Form fields as a POST body. */
export const form = (fields: Record<string, string>) => new URLSearchParams(fields);
/** A page's HTML. */
export const get = async (app: Hono, path: string, headers: Record<string, string> = BEARER) =>
  (await app.request(`/ops${path}`, { headers })).text();
/** A form POST to the inspector. */
export const post = (
  app: Hono,
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = BEARER,
) => app.request(`/ops${path}`, { method: 'POST', headers, body: form(fields) });
/** An instance's stored version, as a form field. */
export const version = async (store: Store, id: string) => String((await store.load(id))!.version);
