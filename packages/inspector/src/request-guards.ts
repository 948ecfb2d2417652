import type { MiddlewareHandler } from 'hono';
import { fail, render, type Vars } from './app-context.js';
import { authenticate, csrfRefused, csrfToken } from './auth.js';
import type { InspectorParts } from './inspector-parts.js';
import { type LoginThrottle, safeNext } from './login-routes.js';
import { loginPage } from './views/login-page.js';

// What runs before every route: the page context and security headers for every response, then
// (after the login routes) the credential check: no page, no asset, no action without one.

const CONTENT_SECURITY_POLICY = (nonce: string) =>
  `default-src 'none'; script-src 'self' 'nonce-${nonce}'; style-src 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

const randomToken = () =>
  btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16)))).replace(/[+/=]/g, '');

/** Sets the page context (base path, CSP nonce, CSRF token, diagram bundle) and adds the security headers to the answer. */
export function pageContext(parts: Pick<InspectorParts, 'basePath' | 'mermaid'>): MiddlewareHandler<Vars> {
  return async (c, next) => {
    const mount = c.req.routePath.replace(/\/?\*$/, '');
    const base = (parts.basePath ?? mount).replace(/\/+$/, '');
    const nonce = randomToken();
    const mermaid = (await parts.mermaid()) ? `${base}/assets/mermaid.min.js` : null;
    c.set('page', { base, nonce, csrf: csrfToken(c, base), mermaidUrl: mermaid, canLogout: false });
    await next();
    c.header('Content-Security-Policy', CONTENT_SECURITY_POLICY(nonce));
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('X-Frame-Options', 'DENY');
    c.header('Referrer-Policy', 'same-origin');
    if (!c.res.headers.has('Cache-Control')) c.header('Cache-Control', 'no-store');
  };
}

/**
 * Lets through only a request with a credential (and, for a post, a readable form that passes the
 * CSRF check); records who it is in the page context. A wrong bearer token counts as a failed
 * login on `throttle`.
 */
export function credentialCheck(
  parts: Pick<InspectorParts, 'auth'>,
  throttle: LoginThrottle,
): MiddlewareHandler<Vars> {
  const { auth } = parts;
  const { limiter, keys } = throttle;
  return async (c, next) => {
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
  };
}
