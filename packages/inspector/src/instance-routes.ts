import {
  cancelRefusal,
  ERROR_KINDS,
  HTTP_STATUS,
  isStepfoldError,
  maskEncoded,
  NotFoundError,
  pendingDecisions,
  readStreamTail,
} from '@stepfold/engine';
import type { Context, Hono } from 'hono';
import { ACTIONS, type ActionName, formVersion, messageFor, sendPinned } from './actions.js';
import { fail, render, setFlash, takeFlash, type Vars } from './app-context.js';
import { loadFamily } from './family.js';
import type { InspectorParts } from './inspector-parts.js';
import { listInstances, readFilters } from './listing.js';
import { instancePath } from './views/format.js';
import { instancePage } from './views/instance-page.js';
import type { Flash } from './views/layout.js';
import { listPage } from './views/list-page.js';

// The instance pages: the list, one instance, and the actions its forms post.

/** The parts the instance routes read. */
type Parts = Pick<InspectorParts, 'store' | 'defs' | 'pageSize' | 'columns' | 'payloads'>;

/** Adds the list (`GET /`), the instance page (`GET /instances/:id`) and its actions (`POST /instances/:id/:action`). */
export function instanceRoutes(app: Hono<Vars>, parts: Parts): void {
  const list = (c: Context<Vars>) => listRoute(c, parts);
  // Mounted at /ops, '/' is /ops only; the second pattern also answers /ops/ (what the links use).
  app.get('/', list);
  app.get('/:slash{/?}', list);
  app.get('/instances/:id', (c) => instanceRoute(c, parts));
  app.post('/instances/:id/:action', (c) => actionRoute(c, parts));
}

async function listRoute(c: Context<Vars>, parts: Parts): Promise<Response> {
  const filters = readFilters(c.req.query());
  const view = { filters, workflows: parts.defs.names, columns: parts.columns };
  try {
    const { items, next, scanned } = await listInstances(parts.store, filters, parts.pageSize);
    return render(
      c,
      listPage(c.get('page'), { ...view, items, next, ...(scanned ? { scanned } : {}) }, takeFlash(c)),
    );
  } catch (e) {
    // Attribute filter text that is no condition: the page says what is wrong, with the form to fix it.
    if (!isStepfoldError(e, 'INVALID_QUERY')) throw e;
    const whereError = e.issues.map((i) => i.message).join('; ') || e.message;
    return render(
      c,
      listPage(c.get('page'), { ...view, items: [], next: null, whereError }, takeFlash(c)),
      400,
    );
  }
}

async function instanceRoute(c: Context<Vars, '/instances/:id'>, parts: Parts): Promise<Response> {
  const { store, defs } = parts;
  const id = c.req.param('id');
  const s = await store.load(id);
  if (!s)
    return fail(
      c,
      HTTP_STATUS['not-found'],
      'Not found',
      `No instance ${JSON.stringify(id)} in the store.`,
      `${c.get('page').base}/`,
    );
  const indexed = defs.of(s);
  const definition = indexed?.def;
  const actions = {
    decisions: definition ? pendingDecisions(definition, s) : [],
    signals: indexed?.signals ?? [],
    cancelRefusal: definition ? cancelRefusal(definition, s) : undefined,
    known: definition !== undefined,
  };
  const family = await loadFamily(store, s, definition);
  // A stream that cannot be read leaves the page without its section, not without the page.
  const stream = store.stream ? await readStreamTail(store.stream, s.id).catch(() => null) : null;
  // Without the codec, encrypted values show as their markers.
  const view = {
    snapshot: maskEncoded(s),
    definition,
    actions,
    family,
    payloads: parts.payloads !== undefined,
    stream,
  };
  return render(c, instancePage(c.get('page'), view, takeFlash(c)));
}

async function actionRoute(c: Context<Vars, '/instances/:id/:action'>, parts: Parts): Promise<Response> {
  const { store, defs } = parts;
  const page = c.get('page');
  const id = c.req.param('id');
  const action = c.req.param('action');
  const back = instancePath(page.base, id);
  if (!(ACTIONS as readonly string[]).includes(action))
    return fail(c, 404, 'Not found', 'No such action.', back);
  const form = await c.req.parseBody();
  const seen = formVersion(form);
  const current = await store.load(id);
  if (!current) throw new NotFoundError(id);
  // A stale page is the inspector's own VERSION_CONFLICT: the status of that kind.
  const conflict = (now: number | string) =>
    fail(
      c,
      HTTP_STATUS.conflict,
      'Conflict',
      `The instance changed since you loaded this page (version ${seen} → ${now}); reload the page and try again. Nothing was changed.`,
      back,
    );
  if (current.version !== seen) return conflict(current.version);
  // Without the codec the reducer would read envelopes where the data is: refused, nothing written.
  if (maskEncoded(current) !== current)
    return fail(
      c,
      HTTP_STATUS[ERROR_KINDS.CODEC_KEY_MISSING],
      'Encrypted',
      'This instance holds encrypted data and the inspector has no codec (its codec option): nothing was changed.',
      back,
    );
  const definition = defs.of(current);
  if (!definition) {
    return fail(
      c,
      // What the engine's UNKNOWN_VERSION would be: the inspector was deployed without it.
      HTTP_STATUS.definition,
      'Unknown definition',
      `The inspector has no definition of ${current.workflow.name} v${current.workflow.version}.`,
      back,
    );
  }
  // No check of cancelRefusal here: the page hides Cancel past a pivot, and a forged post meets
  // the engine's own PAST_PIVOT refusal (a 409, nothing written), one rule in one place.
  const { message, label } = await messageFor(action as ActionName, current, definition, form, page.user);
  let result: Awaited<ReturnType<typeof sendPinned>>;
  try {
    result = await sendPinned(store, defs.originals, message, seen);
  } catch (e) {
    if (!isStepfoldError(e, 'VERSION_CONFLICT')) throw e;
    return conflict((await store.load(id))?.version ?? 'deleted');
  }
  const after = result.snapshot;
  const flash: Flash = result.written
    ? { kind: 'ok', text: `${label}: version ${seen} → ${after.version}, now ${after.status}.` }
    : {
        kind: 'error',
        text: `${label}: the event did not apply; nothing was changed (version ${after.version}).`,
      };
  setFlash(c, flash);
  return c.redirect(back, 303);
}
