import type { Context, Hono } from 'hono';
import { fail, type Vars } from './app-context.js';
import { cleanUser, sameSecret, sameSitePost, setSession } from './auth.js';
import type { InspectorParts } from './inspector-parts.js';
import { connectionAddress, LoginLimiter } from './rate-limit.js';
import { loginPage } from './views/login-page.js';

/** Only paths inside the inspector are followed after login (no open redirect). */
export function safeNext(next: unknown, base: string): string {
  const home = `${base}/`;
  if (typeof next !== 'string' || next.includes('\\') || next.startsWith('//')) return home;
  return next === base || next.startsWith(home) ? next : home;
}

/** The login limiter's keys for a request: its client address and, when given, the user name. */
export type LimitKeys = (c: Context, user?: string) => string[];

/** The failed-login limit the login routes keep, which the credential check also counts wrong bearer tokens on. */
export interface LoginThrottle {
  /** Null when the host turned the limit off. */
  limiter: LoginLimiter | null;
  keys: LimitKeys;
}

/**
 * Adds `GET/POST /login` (token mode) and returns the rate limiter the credential check also uses
 * for wrong bearer tokens (a script guessing tokens is limited like a form).
 */
export function loginRoutes(
  app: Hono<Vars>,
  parts: Pick<InspectorParts, 'auth' | 'loginRateLimit' | 'clientAddress'>,
): LoginThrottle {
  const { auth } = parts;
  const limiter = parts.loginRateLimit === false ? null : new LoginLimiter(parts.loginRateLimit ?? {});
  const keys: LimitKeys = (c, user) => [
    `addr:${parts.clientAddress?.(c) ?? connectionAddress(c) ?? 'unknown'}`,
    ...(user ? [`user:${user.toLowerCase()}`] : []),
  ];
  const hostSignIn = 'This inspector uses its host’s own sign-in.';

  app.get('/login', (c) => {
    if (!('token' in auth)) return fail(c, 404, 'Not found', hostSignIn);
    return c.html(loginPage(c.get('page'), safeNext(c.req.query('next'), c.get('page').base), null));
  });
  app.post('/login', async (c) => {
    const page = c.get('page');
    if (!('token' in auth)) return fail(c, 404, 'Not found', hostSignIn);
    if (!sameSitePost(c)) return fail(c, 403, 'Forbidden', 'cross-site login refused');
    const form = await c.req.parseBody();
    const next = safeNext(form['next'], page.base);
    const user = cleanUser(form['name']);
    const limited = keys(c, user);
    const wait = limiter?.retryAfter(limited) ?? 0;
    if (wait > 0) {
      // Checked before the token: a correct guess made while limited must not be told apart.
      c.header('Retry-After', String(wait));
      const again = `${page.base}/login?next=${encodeURIComponent(next)}`;
      return fail(c, 429, 'Too many attempts', `Too many failed logins; try again in ${wait} s.`, again);
    }
    if (typeof form['token'] !== 'string' || !(await sameSecret(form['token'], auth.token))) {
      limiter?.fail(limited);
      return c.html(loginPage(page, next, 'Wrong token.', user ?? ''), 401);
    }
    await setSession(c, auth.token, page.base, user);
    return c.redirect(next, 303);
  });
  return { limiter, keys };
}
