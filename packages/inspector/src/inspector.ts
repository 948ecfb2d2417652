import { errorKind, HTTP_STATUS, isStepfoldError, NotFoundError } from '@stepfold/engine';
import { cancelRefusal, pendingDecisions } from '@stepfold/engine/introspect';
import { createSchedules } from '@stepfold/engine/schedules';
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ACTIONS, type ActionName, formVersion, messageFor, sendPinned } from './actions.js';
import { authenticate, clearSession, csrfRefused, csrfToken } from './auth.js';
import { indexDefinitions } from './definitions.js';
import { loadFamily } from './family.js';
import { listInstances, readFilters } from './listing.js';
import { loginRoutes, safeNext, type Vars } from './login-routes.js';
import { mermaidBundle } from './mermaid-asset.js';
import { checkOptions, type InspectorOptions } from './options.js';
import { payloadRoute } from './payload-route.js';
import { instancePath, type View } from './views/format.js';
import { instancePage } from './views/instance-page.js';
import { type Flash, messagePage, type PageContext } from './views/layout.js';
import { listPage } from './views/list-page.js';
import { loginPage } from './views/login-page.js';
import { SCHEDULE_ACTIONS, type ScheduleAction, schedulesPage } from './views/schedules-page.js';

export type { InspectorOptions } from './options.js';

const FLASH_COOKIE = 'stepfold_inspector_flash';

const randomToken = () =>
  btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16)))).replace(/[+/=]/g, '');

/**
 * The inspector: a Hono app to mount in your server, with server-rendered pages to list, inspect
 * and steer instances (signal, approve/reject, cancel, abort, requeue) behind `auth`. Every action
 * is refused (409) when the instance moved past the version the page showed.
 *
 * @example
 * const app = new Hono();
 * app.route('/ops', createInspector({ store, workflows: [order], auth: { token: process.env.OPS_TOKEN! } }));
 * serve({ fetch: app.fetch, port: 3000 }); // then open http://localhost:3000/ops/
 */
export function createInspector(options: InspectorOptions): Hono<Vars> {
  const { store, auth } = options;
  const { pageSize, columns } = checkOptions(options);
  const defs = indexDefinitions(options.workflows);
  // Schedules are instances of the built-in schedule workflow: steering them needs no definition.
  const schedules = createSchedules({ store });
  const bundle = mermaidBundle();
  const app = new Hono<Vars>();

  const render = (c: Context<Vars>, view: View, status: ContentfulStatusCode = 200) => c.html(view, status);
  // An error in the first middleware leaves no page context: fall back to a bare one.
  const fallback: PageContext = { base: '', nonce: '', csrf: '', mermaidUrl: null, canLogout: false };
  const fail = (
    c: Context<Vars>,
    status: ContentfulStatusCode,
    title: string,
    message: string,
    back?: string,
  ) => render(c, messagePage(c.get('page') ?? fallback, title, message, back), status);
  const takeFlash = (c: Context<Vars>): Flash | null => {
    const raw = getCookie(c, FLASH_COOKIE);
    if (raw === undefined) return null;
    deleteCookie(c, FLASH_COOKIE, { path: c.get('page').base || '/' });
    try {
      const f = JSON.parse(raw) as Flash;
      return (f.kind === 'ok' || f.kind === 'error') && typeof f.text === 'string' ? f : null;
    } catch {
      return null;
    }
  };

  // Page context and security headers for every response.
  app.use('*', async (c, next) => {
    const mount = c.req.routePath.replace(/\/?\*$/, '');
    const base = (options.basePath ?? mount).replace(/\/+$/, '');
    const nonce = randomToken();
    const mermaid = (await bundle()) ? `${base}/assets/mermaid.min.js` : null;
    c.set('page', { base, nonce, csrf: csrfToken(c, base), mermaidUrl: mermaid, canLogout: false });
    await next();
    c.header(
      'Content-Security-Policy',
      `default-src 'none'; script-src 'self' 'nonce-${nonce}'; style-src 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    );
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('X-Frame-Options', 'DENY');
    c.header('Referrer-Policy', 'same-origin');
    if (!c.res.headers.has('Cache-Control')) c.header('Cache-Control', 'no-store');
  });
  app.use('*', bodyLimit({ maxSize: 1024 * 1024, onError: (c) => c.text('request body over 1 MiB', 413) }));

  // Login comes before the credential check (token mode only).
  const { limiter, keys } = loginRoutes(app, {
    auth,
    rateLimit: options.loginRateLimit,
    clientAddress: options.clientAddress,
    fail: (c, status, title, message, back) => fail(c, status, title, message, back),
  });

  // Everything else needs a credential: no page, no asset, no action without one.
  app.use('*', async (c, next) => {
    const page = c.get('page');
    const bearer = 'token' in auth && c.req.header('authorization') !== undefined;
    const wait = bearer ? (limiter?.retryAfter(keys(c)) ?? 0) : 0;
    if (wait > 0) {
      c.header('Retry-After', String(wait));
      return fail(c, 429, 'Too many attempts', `Too many failed logins; try again in ${wait} s.`);
    }
    const identity = await authenticate(c, auth);
    if (identity === null) {
      if ('authorize' in auth) return fail(c, 403, 'Forbidden', 'You are not allowed to use this inspector.');
      // A wrong bearer token counts like a failed login: scripts guessing tokens are limited too.
      if (bearer) limiter?.fail(keys(c));
      c.header('WWW-Authenticate', 'Bearer realm="stepfold-inspector"');
      if (c.req.method !== 'GET') return fail(c, 401, 'Unauthorized', 'Log in first; nothing was changed.');
      const url = new URL(c.req.url);
      return render(c, loginPage(page, safeNext(url.pathname + url.search, page.base), null), 401);
    }
    const { credential, user } = identity;
    c.set('credential', credential);
    c.set('page', { ...page, canLogout: credential === 'cookie', ...(user ? { user } : {}) });
    if (c.req.method === 'POST') {
      let form: Awaited<ReturnType<typeof c.req.parseBody>>;
      try {
        form = await c.req.parseBody();
      } catch {
        // A body that claims a form type but is none (a torn multipart, say): the client's fault.
        return fail(c, 400, 'Bad request', 'The form could not be read; nothing was changed.');
      }
      const refused = await csrfRefused(c, credential, form['_csrf']);
      if (refused) return fail(c, 403, 'Forbidden', `${refused}; nothing was changed.`);
    }
    await next();
  });

  app.post('/logout', (c) => {
    clearSession(c, c.get('page').base);
    return c.redirect(`${c.get('page').base}/login`, 303);
  });

  app.get('/assets/mermaid.min.js', async (c) => {
    const bytes = await bundle();
    if (!bytes) return c.notFound();
    c.header('Cache-Control', 'private, max-age=86400');
    return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
      'Content-Type': 'text/javascript; charset=utf-8',
    });
  });

  const list = async (c: Context<Vars>) => {
    const filters = readFilters(c.req.query());
    const { items, next, scanned } = await listInstances(store, filters, pageSize);
    const view = { filters, items, next, workflows: defs.names, columns, ...(scanned ? { scanned } : {}) };
    return render(c, listPage(c.get('page'), view, takeFlash(c)));
  };
  // Mounted at /ops, '/' is /ops only; the second pattern also answers /ops/ (what the links use).
  app.get('/', list);
  app.get('/:slash{/?}', list);

  const setFlash = (c: Context<Vars>, flash: Flash) =>
    setCookie(c, FLASH_COOKIE, JSON.stringify(flash), {
      path: c.get('page').base || '/',
      httpOnly: true,
      sameSite: 'Strict',
      maxAge: 60,
    });

  app.get('/schedules', async (c) => {
    const cursor = c.req.query('cursor') ?? null;
    const { items, cursor: next } = await schedules.list({ limit: pageSize, cursor });
    return render(c, schedulesPage(c.get('page'), { items, next, paged: cursor !== null }, takeFlash(c)));
  });

  // Schedule commands are not pinned to a version as instance actions are: a schedule's instance
  // moves at every slot, and a pause, resume or trigger means the same whatever it moved to.
  app.post('/schedules/:id/:action', async (c) => {
    const page = c.get('page');
    const id = c.req.param('id');
    const action = c.req.param('action') as ScheduleAction;
    if (!SCHEDULE_ACTIONS.includes(action)) return fail(c, 404, 'Not found', 'No such action.');
    const by = page.user ? ` (by ${page.user})` : '';
    let text: string;
    if (action === 'pause') {
      await schedules.pause(id, page.user ? { note: `paused by ${page.user}` } : {});
      text = `pause of ${id} written${by}; a worker applies it.`;
    } else if (action === 'resume') {
      await schedules.resume(id);
      text = `resume of ${id} written${by}; a worker applies it.`;
    } else {
      const { runId } = await schedules.trigger(id);
      text = `trigger of ${id} written${by}: run ${runId}, started by a worker.`;
    }
    setFlash(c, { kind: 'ok', text });
    return c.redirect(`${page.base}/schedules`, 303);
  });

  app.get('/instances/:id', async (c) => {
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
    const view = { snapshot: s, definition, actions, family, payloads: options.payloads !== undefined };
    return render(c, instancePage(c.get('page'), view, takeFlash(c)));
  });

  payloadRoute(app, { store, payloads: options.payloads, render, fail });

  app.post('/instances/:id/:action', async (c) => {
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
    const user = page.user;
    const { message, label } = await messageFor(action as ActionName, current, definition, form, user);
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
  });

  app.notFound((c) => fail(c, 404, 'Not found', `Nothing at ${c.req.path}.`));
  app.onError((e, c) => {
    const back = c.req.param('id')
      ? instancePath(c.get('page')?.base ?? '', c.req.param('id') ?? '')
      : undefined;
    if (isStepfoldError(e)) {
      // The engine's kind decides, as it does the CLI's exit code; a code this copy has no kind for is ours to fix.
      const kind = errorKind(e);
      const status = kind === undefined ? 500 : HTTP_STATUS[kind];
      // A validation error lists its issues one per line, under the summary its message opens with.
      const summary = e.issues.length ? (e.message.split(':\n')[0] ?? e.message) : e.message;
      return render(c, messagePage(c.get('page') ?? fallback, e.code, summary, back, e.issues), status);
    }
    console.error('@stepfold/inspector:', e);
    return fail(c, 500, 'Error', 'Internal error; see the server log.', back);
  });
  return app;
}
