import type { Context, Hono } from 'hono';
import { render, takeFlash, type Vars } from './app-context.js';
import type { InspectorParts } from './inspector-parts.js';
import { limitsPage } from './views/limits-page.js';

// The limits page: the store's flow counters (`store.flow.list`), read-only.

/** The parts the limits route reads. */
type Parts = Pick<InspectorParts, 'store' | 'pageSize'>;

/** Adds the limits page (`GET /limits`, optionally `?scope=` and `?cursor=`). */
export function limitsRoutes(app: Hono<Vars>, parts: Parts): void {
  app.get('/limits', (c) => limitsRoute(c, parts));
}

async function limitsRoute(c: Context<Vars>, parts: Parts): Promise<Response> {
  const page = c.get('page');
  const flow = parts.store.flow;
  if (!flow) return render(c, limitsPage(page, { kind: 'no-flow' }, takeFlash(c)));
  const cursor = c.req.query('cursor') || null;
  const scope = c.req.query('scope') || null;
  const { items, cursor: next } = await flow.list({
    limit: parts.pageSize,
    cursor,
    now: Date.now(),
    ...(scope === null ? {} : { scope }),
  });
  return render(
    c,
    limitsPage(page, { kind: 'counters', items, next, paged: cursor !== null, scope }, takeFlash(c)),
  );
}
