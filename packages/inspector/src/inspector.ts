import { type AnyDefinition, isStepfoldError, NotFoundError, type Store } from '@stepfold/engine';
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ACTIONS, type ActionName, formVersion, messageFor, sendPinned } from './actions.js';
import {
  authenticate,
  type Credential,
  clearSession,
  csrfRefused,
  csrfToken,
  type InspectorAuth,
  sameSecret,
  sameSitePost,
  setSession,
} from './auth.js';
import { indexDefinitions, pendingDecisions, signalNames } from './definitions.js';
import { listInstances, readFilters } from './listing.js';
import { mermaidBundle } from './mermaid-asset.js';
import { instancePath, type View } from './views/format.js';
import { instancePage } from './views/instance-page.js';
import { type Flash, messagePage, type PageContext } from './views/layout.js';
import { listPage } from './views/list-page.js';
import { loginPage } from './views/login-page.js';

/** Options of {@link createInspector}. */
export interface InspectorOptions {
  /** The store your runners and workers use. */
  store: Store;
  /** The definitions of the instances to inspect and steer (every version still running). */
  workflows: readonly AnyDefinition[];
  /** Required: a bearer token, or your own `authorize(c)` check. There is no open mode. */
  auth: InspectorAuth;
  /**
   * The URL prefix links and cookies use. Default: the path the app is mounted at
   * (`app.route('/ops', inspector)` gives `/ops`); set it when a proxy strips a prefix.
   */
  basePath?: string | undefined;
  /** Instances per list page (default 50, at most 500). */
  pageSize?: number | undefined;
}

interface Vars {
  Variables: { page: PageContext; credential: Credential };
}

const FLASH_COOKIE = 'stepfold_inspector_flash';
const ERROR_STATUS: Partial<Record<string, ContentfulStatusCode>> = {
  VERSION_CONFLICT: 409,
  DEFINITION_HASH_MISMATCH: 409,
  NOT_FOUND: 404,
  UNKNOWN_WORKFLOW: 404,
  UNKNOWN_VERSION: 404,
  STORE_UNAVAILABLE: 503,
  INBOX_OVERFLOW: 429,
  SNAPSHOT_TOO_LARGE: 413,
};

const randomToken = () =>
  btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16)))).replace(/[+/=]/g, '');

/** Only paths inside the inspector are followed after login (no open redirect). */
function safeNext(next: unknown, base: string): string {
  const home = `${base}/`;
  if (typeof next !== 'string' || next.includes('\\') || next.startsWith('//')) return home;
  return next === base || next.startsWith(home) ? next : home;
}

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
  if (!auth || !(('token' in auth && typeof auth.token === 'string') || 'authorize' in auth)) {
    throw new TypeError('createInspector: auth is required: { token } or { authorize(c) }');
  }
  if ('token' in auth && auth.token.length < 8) {
    throw new TypeError('createInspector: auth.token must be at least 8 characters');
  }
  const defs = indexDefinitions(options.workflows);
  const pageSize = Math.min(Math.max(Math.floor(options.pageSize ?? 50), 1), 500);
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

  // Login and logout come before the credential check (token mode only).
  app.get('/login', (c) => {
    if (!('token' in auth)) return fail(c, 404, 'Not found', 'This inspector uses its host’s own sign-in.');
    return render(c, loginPage(c.get('page'), safeNext(c.req.query('next'), c.get('page').base), null));
  });
  app.post('/login', async (c) => {
    const page = c.get('page');
    if (!('token' in auth)) return fail(c, 404, 'Not found', 'This inspector uses its host’s own sign-in.');
    if (!sameSitePost(c)) return fail(c, 403, 'Forbidden', 'cross-site login refused');
    const form = await c.req.parseBody();
    const next = safeNext(form['next'], page.base);
    if (typeof form['token'] !== 'string' || !(await sameSecret(form['token'], auth.token))) {
      return render(c, loginPage(page, next, 'Wrong token.'), 401);
    }
    await setSession(c, auth.token, page.base);
    return c.redirect(next, 303);
  });

  // Everything else needs a credential: no page, no asset, no action without one.
  app.use('*', async (c, next) => {
    const credential = await authenticate(c, auth);
    const page = c.get('page');
    if (credential === null) {
      if ('authorize' in auth) return fail(c, 403, 'Forbidden', 'You are not allowed to use this inspector.');
      c.header('WWW-Authenticate', 'Bearer realm="stepfold-inspector"');
      if (c.req.method !== 'GET') return fail(c, 401, 'Unauthorized', 'Log in first; nothing was changed.');
      const url = new URL(c.req.url);
      return render(c, loginPage(page, safeNext(url.pathname + url.search, page.base), null), 401);
    }
    c.set('credential', credential);
    c.set('page', { ...page, canLogout: credential === 'cookie' });
    if (c.req.method === 'POST') {
      const form = await c.req.parseBody();
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
    const { items, next } = await listInstances(store, filters, pageSize);
    return render(c, listPage(c.get('page'), { filters, items, next, workflows: defs.names }, takeFlash(c)));
  };
  // Mounted at /ops, '/' is /ops only; the second pattern also answers /ops/ (what the links use).
  app.get('/', list);
  app.get('/:slash{/?}', list);

  app.get('/instances/:id', async (c) => {
    const id = c.req.param('id');
    const s = await store.load(id);
    if (!s)
      return fail(
        c,
        404,
        'Not found',
        `No instance ${JSON.stringify(id)} in the store.`,
        `${c.get('page').base}/`,
      );
    const definition = defs.of(s);
    const actions = {
      decisions: pendingDecisions(definition, s),
      signals: signalNames(definition),
      known: definition !== undefined,
    };
    return render(c, instancePage(c.get('page'), { snapshot: s, definition, actions }, takeFlash(c)));
  });

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
    const conflict = (now: number | string) =>
      fail(
        c,
        409,
        'Conflict',
        `The instance changed since you loaded this page (version ${seen} → ${now}); reload the page and try again. Nothing was changed.`,
        back,
      );
    if (current.version !== seen) return conflict(current.version);
    const definition = defs.of(current);
    if (!definition) {
      return fail(
        c,
        400,
        'Unknown definition',
        `The inspector has no definition of ${current.workflow.name} v${current.workflow.version}.`,
        back,
      );
    }
    const { message, label } = messageFor(action as ActionName, current, definition, form);
    let result: Awaited<ReturnType<typeof sendPinned>>;
    try {
      result = await sendPinned(store, defs.all, message, seen);
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
    setCookie(c, FLASH_COOKIE, JSON.stringify(flash), {
      path: page.base || '/',
      httpOnly: true,
      sameSite: 'Strict',
      maxAge: 60,
    });
    return c.redirect(back, 303);
  });

  app.notFound((c) => fail(c, 404, 'Not found', `Nothing at ${c.req.path}.`));
  app.onError((e, c) => {
    const back = c.req.param('id')
      ? instancePath(c.get('page')?.base ?? '', c.req.param('id') ?? '')
      : undefined;
    if (isStepfoldError(e)) {
      const status =
        ERROR_STATUS[e.code] ?? (e.code.startsWith('INVALID_') || e.code === 'UNKNOWN_SIGNAL' ? 400 : 500);
      return fail(c, status, e.code, e.message, back);
    }
    console.error('@stepfold/inspector:', e);
    return fail(c, 500, 'Error', 'Internal error; see the server log.', back);
  });
  return app;
}
