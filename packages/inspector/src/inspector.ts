import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { fail, type Vars } from './app-context.js';
import { clearSession } from './auth.js';
import { errorPage } from './error-page.js';
import { inspectorParts } from './inspector-parts.js';
import { instanceRoutes } from './instance-routes.js';
import { limitsRoutes } from './limits-routes.js';
import { loginRoutes } from './login-routes.js';
import type { MermaidBundle } from './mermaid-asset.js';
import type { InspectorOptions } from './options.js';
import { payloadRoute } from './payload-route.js';
import { credentialCheck, pageContext } from './request-guards.js';
import { scheduleRoutes } from './schedule-routes.js';

export type { InspectorOptions } from './options.js';

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
  const parts = inspectorParts(options);
  const app = new Hono<Vars>();
  app.use('*', pageContext(parts));
  app.use('*', bodyLimit({ maxSize: 1024 * 1024, onError: (c) => c.text('request body over 1 MiB', 413) }));
  // Login comes before the credential check (token mode only).
  const throttle = loginRoutes(app, parts);
  app.use('*', credentialCheck(parts, throttle));
  app.post('/logout', logout);
  app.get('/assets/mermaid.min.js', (c) => mermaidAsset(c, parts.mermaid));
  instanceRoutes(app, parts);
  scheduleRoutes(app, parts);
  limitsRoutes(app, parts);
  payloadRoute(app, parts);
  app.notFound((c) => fail(c, 404, 'Not found', `Nothing at ${c.req.path}.`));
  app.onError(errorPage);
  return app;
}

function logout(c: Context<Vars>): Response {
  clearSession(c, c.get('page').base);
  return c.redirect(`${c.get('page').base}/login`, 303);
}

/** The diagram's browser bundle, cached by the browser for a day; 404 without the `mermaid` package. */
async function mermaidAsset(c: Context<Vars>, mermaid: MermaidBundle): Promise<Response> {
  const bytes = await mermaid();
  if (!bytes) return c.notFound();
  c.header('Cache-Control', 'private, max-age=86400');
  return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
    'Content-Type': 'text/javascript; charset=utf-8',
  });
}
