import type { Snapshot } from '@stepfold/engine';
import { html } from 'hono/html';
import { badge, instancePath, STATUSES, timeCell, type View } from './format.js';
import { type Flash, layout, type PageContext } from './layout.js';

/** The list filters as read from the query string (already validated). */
export interface ListFilters {
  status?: string | undefined;
  workflow?: string | undefined;
  prefix?: string | undefined;
  cursor?: string | undefined;
}

/** What the list page shows: one page of instances and the cursor of the next. */
export interface ListView {
  filters: ListFilters;
  items: readonly Snapshot[];
  next: string | null;
  workflows: readonly string[];
}

function query(filters: ListFilters, cursor?: string): string {
  const q = new URLSearchParams();
  if (filters.status) q.set('status', filters.status);
  if (filters.workflow) q.set('workflow', filters.workflow);
  if (filters.prefix) q.set('prefix', filters.prefix);
  if (cursor) q.set('cursor', cursor);
  const s = q.toString();
  return s ? `?${s}` : '';
}

function filterForm(ctx: PageContext, v: ListView): View {
  const { status, workflow, prefix } = v.filters;
  // The workflow filter lists the inspector's definitions plus a filter value it does not know.
  const names = workflow && !v.workflows.includes(workflow) ? [...v.workflows, workflow] : v.workflows;
  return html`<form class="filters" method="get" action="${ctx.base}/">
<label>Status<select name="status">
<option value="">any</option>
${STATUSES.map((s) => html`<option value="${s}"${s === status ? ' selected' : ''}>${s}</option>`)}
</select></label>
<label>Workflow<select name="workflow">
<option value="">any</option>
${names.map((n) => html`<option value="${n}"${n === workflow ? ' selected' : ''}>${n}</option>`)}
</select></label>
<label>Id prefix<input name="prefix" value="${prefix ?? ''}" size="24" autocomplete="off"></label>
<button type="submit">Filter</button>
<a href="${ctx.base}/">Clear</a>
</form>`;
}

function row(ctx: PageContext, s: Snapshot): View {
  return html`<tr>
<td class="id"><a href="${instancePath(ctx.base, s.id)}">${s.id}</a></td>
<td>${s.workflow.name}@${String(s.workflow.version)}</td>
<td>${badge(s.status)}</td>
<td>${String(s.version)}</td>
<td>${timeCell(s.updatedAt)}</td>
<td>${timeCell(s.wakeAt)}</td>
</tr>`;
}

/** The instance list: filters, a table of one page, and paging links. */
export function listPage(ctx: PageContext, v: ListView, flash: Flash | null): View {
  const filtered = Boolean(v.filters.status || v.filters.workflow || v.filters.prefix);
  const body = html`<h1>Instances</h1>
${filterForm(ctx, v)}
<table id="instances">
<thead><tr><th>id</th><th>workflow@version</th><th>status</th><th>version</th><th>updated (UTC)</th><th>wakeAt (UTC)</th></tr></thead>
<tbody>
${
  v.items.length
    ? v.items.map((s) => row(ctx, s))
    : html`<tr><td colspan="6" class="muted">${filtered ? 'No instance matches these filters.' : 'No instances.'}</td></tr>`
}
</tbody>
</table>
<nav class="pager">
${v.filters.cursor ? html`<a href="${ctx.base}/${query(v.filters)}">First page</a>` : ''}
${v.next ? html`<a rel="next" href="${ctx.base}/${query(v.filters, v.next)}">Next page →</a>` : ''}
</nav>`;
  return layout(ctx, 'Instances', body, { flash });
}
