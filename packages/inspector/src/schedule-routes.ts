import type { Context, Hono } from 'hono';
import { fail, render, setFlash, takeFlash, type Vars } from './app-context.js';
import type { InspectorParts } from './inspector-parts.js';
import type { PageContext } from './views/layout.js';
import { SCHEDULE_ACTIONS, type ScheduleAction, schedulesPage } from './views/schedules-page.js';

// The schedules page and the commands its buttons post.

/** The parts the schedule routes read. */
type Parts = Pick<InspectorParts, 'schedules' | 'pageSize'>;

/** Adds the schedules page (`GET /schedules`) and its commands (`POST /schedules/:id/:action`). */
export function scheduleRoutes(app: Hono<Vars>, parts: Parts): void {
  app.get('/schedules', (c) => schedulesRoute(c, parts));
  app.post('/schedules/:id/:action', (c) => commandRoute(c, parts));
}

async function schedulesRoute(c: Context<Vars>, parts: Parts): Promise<Response> {
  const cursor = c.req.query('cursor') ?? null;
  const { items, cursor: next } = await parts.schedules.list({ limit: parts.pageSize, cursor });
  return render(c, schedulesPage(c.get('page'), { items, next, paged: cursor !== null }, takeFlash(c)));
}

// Schedule commands are not pinned to a version as instance actions are: a schedule's instance
// moves at every slot, and a pause, resume or trigger means the same whatever it moved to.
async function commandRoute(c: Context<Vars, '/schedules/:id/:action'>, parts: Parts): Promise<Response> {
  const page = c.get('page');
  const id = c.req.param('id');
  const action = c.req.param('action') as ScheduleAction;
  if (!SCHEDULE_ACTIONS.includes(action)) return fail(c, 404, 'Not found', 'No such action.');
  const text = await command(parts, page, id, action);
  setFlash(c, { kind: 'ok', text });
  return c.redirect(`${page.base}/schedules`, 303);
}

/** Writes one schedule command; resolves with the line the schedules page then shows. */
async function command(parts: Parts, page: PageContext, id: string, action: ScheduleAction): Promise<string> {
  const { schedules } = parts;
  const by = page.user ? ` (by ${page.user})` : '';
  if (action === 'pause') {
    await schedules.pause(id, page.user ? { note: `paused by ${page.user}` } : {});
    return `pause of ${id} written${by}; a worker applies it.`;
  }
  if (action === 'resume') {
    await schedules.resume(id);
    return `resume of ${id} written${by}; a worker applies it.`;
  }
  const { runId } = await schedules.trigger(id);
  return `trigger of ${id} written${by}: run ${runId}, started by a worker.`;
}
