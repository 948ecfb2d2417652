import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Credential } from './auth.js';
import type { View } from './views/format.js';
import { type Flash, messagePage, type PageContext } from './views/layout.js';

// The inspector app's request context, and the answers every route gives through it: a page, a
// message page, and the one-shot flash a redirect carries to the next page.

/** The inspector app's context variables. */
export interface Vars {
  Variables: { page: PageContext; credential: Credential };
}

const FLASH_COOKIE = 'stepfold_inspector_flash';

// An error in the first middleware leaves no page context: fall back to a bare one.
const BARE_PAGE: PageContext = { base: '', nonce: '', csrf: '', mermaidUrl: null, canLogout: false };

/** The request's page context, or a bare one when the first middleware did not get to set it. */
export function pageOf(c: Context<Vars>): PageContext {
  return c.get('page') ?? BARE_PAGE;
}

/** Answers with a rendered page. */
export function render(
  c: Context<Vars>,
  view: View,
  status: ContentfulStatusCode = 200,
): Response | Promise<Response> {
  return c.html(view, status);
}

/** Answers with a message page: a title, a sentence, and where to go back to. */
export function fail(
  c: Context<Vars>,
  status: ContentfulStatusCode,
  title: string,
  message: string,
  back?: string,
): Response | Promise<Response> {
  return render(c, messagePage(pageOf(c), title, message, back), status);
}

/** Leaves a message for the page a redirect goes to. */
export function setFlash(c: Context<Vars>, flash: Flash): void {
  setCookie(c, FLASH_COOKIE, JSON.stringify(flash), {
    path: c.get('page').base || '/',
    httpOnly: true,
    sameSite: 'Strict',
    maxAge: 60,
  });
}

/** The message a redirect left for this page, read once; null when none (or not one of ours). */
export function takeFlash(c: Context<Vars>): Flash | null {
  const raw = getCookie(c, FLASH_COOKIE);
  if (raw === undefined) return null;
  deleteCookie(c, FLASH_COOKIE, { path: c.get('page').base || '/' });
  try {
    const f = JSON.parse(raw) as Flash;
    return (f.kind === 'ok' || f.kind === 'error') && typeof f.text === 'string' ? f : null;
  } catch {
    return null;
  }
}
