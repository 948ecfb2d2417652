import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';

/**
 * What a host's `authorize(c)` answers: `false`/`null`/`undefined` refuses (403); `true` lets the
 * request in anonymously; a user name (or `{ name }`) lets it in as that user, whose name the
 * inspector records with the decisions and actions it sends.
 */
export type AuthorizeResult = boolean | string | { name: string } | null | undefined;

/**
 * Who may use the inspector. `{ token }`: a shared secret, sent as `Authorization: Bearer <token>`
 * or typed once into the login form (which sets an HttpOnly, SameSite=Strict session cookie, and
 * carries the name the user gave there). `{ authorize }`: the host's own check (its session, SSO
 * headers…), run on every request, which may name the user.
 */
export type InspectorAuth =
  | { token: string }
  | { authorize(c: Context): AuthorizeResult | Promise<AuthorizeResult> };

/** How a request proved who it is, which decides whether its forms need the CSRF token. */
export type Credential = 'bearer' | 'cookie' | 'host';

/** A request's credential and, when known, the user it acts for (recorded with decisions and actions). */
export interface Identity {
  credential: Credential;
  user?: string | undefined;
}

/** Longest user name kept; longer names are cut (it is a label, and it goes into stored payloads). */
export const MAX_USER_LENGTH = 120;

/** A user name as recorded: trimmed, control characters dropped, at most {@link MAX_USER_LENGTH}. */
export function cleanUser(name: unknown): string | undefined {
  if (typeof name !== 'string') return undefined;
  const printable = [...name].filter((ch) => ch >= ' ' && ch !== '\u007f').join('');
  const clean = printable.trim().slice(0, MAX_USER_LENGTH);
  return clean === '' ? undefined : clean;
}

/** Cookie names; `__Host-` prefixes are avoided because the cookie is scoped to the mount path. */
export const SESSION_COOKIE = 'stepfold_inspector_session';
const CSRF_COOKIE = 'stepfold_inspector_csrf';
/** Name of the hidden form field that carries the CSRF token. */
export const CSRF_FIELD = '_csrf';

const encoder = new TextEncoder();

function base64url(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

async function hmac(key: string, message: string): Promise<Uint8Array> {
  const k = await crypto.subtle.importKey(
    'raw',
    encoder.encode(key),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  return new Uint8Array(await crypto.subtle.sign('HMAC', k, encoder.encode(message)));
}

/**
 * Compares two secrets without leaking where they differ: both are HMAC'd with a random key first,
 * so the comparison runs over equal-length digests whatever the inputs' lengths.
 */
export async function sameSecret(a: string, b: string): Promise<boolean> {
  const key = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const [x, y] = await Promise.all([hmac(key, a), hmac(key, b)]);
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

const encodeUser = (user: string | undefined) => (user ? base64url(encoder.encode(user)) : '');
const decodeUser = (raw: string): string | undefined => {
  try {
    const bin = atob(raw.replace(/-/g, '+').replace(/_/g, '/'));
    return cleanUser(new TextDecoder().decode(Uint8Array.from(bin, (ch) => ch.charCodeAt(0))));
  } catch {
    return undefined;
  }
};

/**
 * The session cookie's value for a token and the name given at login: `<name>.<mac>`, the mac an
 * HMAC of the name under the token. Derived, not the token itself, so a leaked cookie does not
 * reveal a token the host may use elsewhere (it still opens the inspector until the token
 * changes), and the name cannot be edited without the token.
 */
export async function sessionValue(token: string, user?: string): Promise<string> {
  const name = encodeUser(user);
  return `${name}.${base64url(await hmac(token, `stepfold-inspector/session/v2\n${name}`))}`;
}

/** Checks a request's credential; `null` when it has none that is valid. */
export async function authenticate(c: Context, auth: InspectorAuth): Promise<Identity | null> {
  if ('authorize' in auth) {
    const answer = await auth.authorize(c);
    if (!answer) return null;
    const user = cleanUser(typeof answer === 'object' ? answer.name : answer);
    return { credential: 'host', ...(user ? { user } : {}) };
  }
  const header = c.req.header('authorization');
  if (header !== undefined) {
    const m = /^Bearer\s+(.+)$/i.exec(header.trim());
    // A wrong header is a wrong credential: no falling back to the cookie.
    return m?.[1] !== undefined && (await sameSecret(m[1], auth.token)) ? { credential: 'bearer' } : null;
  }
  const cookie = getCookie(c, SESSION_COOKIE);
  const dot = cookie?.indexOf('.') ?? -1;
  if (cookie === undefined || dot < 0) return null;
  const name = cookie.slice(0, dot);
  const user = name ? decodeUser(name) : undefined;
  if (!(await sameSecret(cookie, await sessionValue(auth.token, user)))) return null;
  return { credential: 'cookie', ...(user ? { user } : {}) };
}

/** Cookie attributes: scoped to the inspector's path, never readable by scripts, never sent cross-site. */
function cookieOptions(c: Context, path: string) {
  return {
    path: path || '/',
    httpOnly: true,
    sameSite: 'Strict' as const,
    secure: new URL(c.req.url).protocol === 'https:',
  };
}

/** Sets the login session cookie (token mode), carrying the name given at login. */
export async function setSession(c: Context, token: string, path: string, user?: string): Promise<void> {
  setCookie(c, SESSION_COOKIE, await sessionValue(token, user), {
    ...cookieOptions(c, path),
    maxAge: 12 * 3600,
  });
}

/** Ends the login session. */
export function clearSession(c: Context, path: string): void {
  deleteCookie(c, SESSION_COOKIE, cookieOptions(c, path));
}

/**
 * The CSRF token for this browser (double-submit): a random value kept in an HttpOnly cookie and
 * repeated in every form; set on the first page a browser loads.
 */
export function csrfToken(c: Context, path: string): string {
  const existing = getCookie(c, CSRF_COOKIE);
  if (existing !== undefined && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const fresh = base64url(crypto.getRandomValues(new Uint8Array(32)));
  setCookie(c, CSRF_COOKIE, fresh, cookieOptions(c, path));
  return fresh;
}

/**
 * Whether a form POST may be a cross-site forgery. A browser attaches cookies by itself (and a
 * host's `authorize` may read them), so such posts must come from this origin (`Sec-Fetch-Site`)
 * and echo the CSRF cookie in the form. A bearer header is never added by a browser on its own,
 * so a request that carries one is the caller's own doing and needs neither.
 */
export async function csrfRefused(
  c: Context,
  credential: Credential,
  field: unknown,
): Promise<string | null> {
  if (credential === 'bearer') return null;
  const site = c.req.header('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    return `cross-site form post refused (Sec-Fetch-Site: ${site})`;
  }
  const cookie = getCookie(c, CSRF_COOKIE);
  if (cookie === undefined || typeof field !== 'string' || !(await sameSecret(cookie, field))) {
    return 'missing or wrong CSRF token: reload the page and submit again';
  }
  return null;
}

/** Whether the login form's post comes from this origin (a login forged from elsewhere is refused). */
export function sameSitePost(c: Context): boolean {
  const site = c.req.header('sec-fetch-site');
  return site === undefined || site === 'same-origin' || site === 'none';
}
