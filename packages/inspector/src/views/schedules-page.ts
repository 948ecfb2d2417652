import type { ScheduleInfo } from '@stepfold/engine/schedules';
import { html } from 'hono/html';
import { badge, instancePath, timeCell, type View } from './format.js';
import { type Flash, layout, type PageContext } from './layout.js';

/** The actions the schedules page's buttons post to (`POST <base>/schedules/<id>/<action>`). */
export const SCHEDULE_ACTIONS = ['pause', 'resume', 'trigger'] as const;
/** One of {@link SCHEDULE_ACTIONS}. */
export type ScheduleAction = (typeof SCHEDULE_ACTIONS)[number];

/** The path of a schedule action under the inspector's base path. */
export function schedulePath(base: string, id: string, action: ScheduleAction): string {
  return `${base}/schedules/${encodeURIComponent(id)}/${action}`;
}

function when(s: ScheduleInfo): string {
  if (s.cron !== undefined) return `cron ${s.cron} (${s.timeZone ?? 'UTC'})`;
  return `every ${(s.everyMs ?? 0) / 1000} s`;
}

function button(ctx: PageContext, s: ScheduleInfo, action: ScheduleAction, label: string): View {
  return html`<form method="post" action="${schedulePath(ctx.base, s.id, action)}" data-action="${action}">
<input type="hidden" name="_csrf" value="${ctx.csrf}"><button type="submit" class="plain">${label}</button></form>`;
}

function row(ctx: PageContext, s: ScheduleInfo): View {
  const last = s.recent[0];
  return html`<tr data-id="${s.id}">
<td class="id"><a href="${instancePath(ctx.base, s.id)}">${s.id}</a></td>
<td>${s.workflow}</td>
<td>${when(s)}<br><span class="muted">overlap ${s.overlap}</span></td>
<td>${badge(s.status)}${s.note ? html`<br><span class="muted">${s.note}</span>` : ''}</td>
<td>${timeCell(s.nextSlot)}</td>
<td>${last ? html`<a class="id" href="${instancePath(ctx.base, last.id)}">${last.id}</a>` : html`<span class="muted">—</span>`}</td>
<td title="skipped: ${Object.entries(s.skippedBy)
    .map(([k, n]) => `${k} ${n}`)
    .join(
      ', ',
    )}">${String(s.counts.started)} / ${String(s.counts.skipped)} / ${String(s.counts.triggered)}</td>
<td class="schedule-actions">${
    s.status === 'deleted'
      ? ''
      : html`${s.paused ? button(ctx, s, 'resume', 'Resume') : button(ctx, s, 'pause', 'Pause')}${button(
          ctx,
          s,
          'trigger',
          'Trigger now',
        )}`
  }${s.pendingCommands ? html`<span class="muted">${String(s.pendingCommands)} command(s) waiting for a worker</span>` : ''}</td>
</tr>`;
}

/** The schedules page: every schedule in the store, with pause/resume and trigger buttons. */
export function schedulesPage(
  ctx: PageContext,
  v: { items: readonly ScheduleInfo[]; next: string | null; paged: boolean },
  flash: Flash | null,
): View {
  const body = html`<h1>Schedules</h1>
<p class="muted">Each command is written for your workers to apply: they start the runs.</p>
<table id="schedules">
<thead><tr><th>id</th><th>workflow</th><th>when</th><th>status</th><th>next slot (UTC)</th><th>last run</th><th>started / skipped / triggered</th><th>actions</th></tr></thead>
<tbody>
${
  v.items.length
    ? v.items.map((s) => row(ctx, s))
    : html`<tr><td colspan="8" class="muted">No schedules.</td></tr>`
}
</tbody>
</table>
<nav class="pager">
${v.paged ? html`<a href="${ctx.base}/schedules">First page</a>` : ''}
${v.next ? html`<a rel="next" href="${ctx.base}/schedules?cursor=${encodeURIComponent(v.next)}">Next page →</a>` : ''}
</nav>`;
  return layout(ctx, 'Schedules', body, { flash });
}
