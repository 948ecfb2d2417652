import { attemptOverdue, type Snapshot } from '@stepfold/engine';
import { html } from 'hono/html';
import { cellText, columnValue, type InspectorColumn, lastError } from '../columns.js';
import { badge, instancePath, STATUSES, time, timeCell, type View } from './format.js';
import { type Flash, layout, type PageContext } from './layout.js';

/** The list filters as read from the query string (already validated). */
export interface ListFilters {
  status?: string | undefined;
  workflow?: string | undefined;
  prefix?: string | undefined;
  cursor?: string | undefined;
  /** Only instances updated at or after this time (epoch ms). */
  since?: number | undefined;
  /** Only instances updated before this time (epoch ms). */
  before?: number | undefined;
  /** Only instances no other one started (no parent): a map's children are left out. */
  topLevel?: boolean | undefined;
  /** Conditions on search attributes as written (`customerId=42 total>=100`), applied by the store. */
  where?: string | undefined;
}

/** What the list page shows: one page of instances and the cursor of the next. */
export interface ListView {
  filters: ListFilters;
  items: readonly Snapshot[];
  next: string | null;
  workflows: readonly string[];
  /** The host's extra columns. */
  columns: readonly InspectorColumn[];
  /** Set when the time filter's scan bound cut the page short: rows read without filling it. */
  scanned?: number | undefined;
  /** When the page is drawn: an instance with attempts running past their lease or deadline then says so (default now). */
  now?: number | undefined;
  /** Why the attribute filter's text was refused (nothing was listed). */
  whereError?: string | undefined;
}

/** A time filter as the `datetime-local` input shows it (UTC, to the second). */
const localTime = (ms: number | undefined) =>
  ms === undefined ? '' : new Date(ms).toISOString().slice(0, 19);

function query(filters: ListFilters, cursor?: string): string {
  const q = new URLSearchParams();
  if (filters.status) q.set('status', filters.status);
  if (filters.workflow) q.set('workflow', filters.workflow);
  if (filters.prefix) q.set('prefix', filters.prefix);
  if (filters.since !== undefined) q.set('since', localTime(filters.since));
  if (filters.before !== undefined) q.set('before', localTime(filters.before));
  if (filters.topLevel) q.set('top', '1');
  if (filters.where) q.set('where', filters.where);
  if (cursor) q.set('cursor', cursor);
  const s = q.toString();
  return s ? `?${s}` : '';
}

function filterForm(ctx: PageContext, v: ListView): View {
  const { status, workflow, prefix, since, before, topLevel, where } = v.filters;
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
<label>Id prefix<input name="prefix" value="${prefix ?? ''}" size="20" autocomplete="off"></label>
<label title="conditions on search attributes, separated by spaces: name=value, name>=value, name<value; status= and workflow= too; quote a value with spaces">Attributes<input name="where" value="${where ?? ''}" size="28" autocomplete="off" placeholder="customerId=42 total>=100"${v.whereError ? ' aria-invalid="true"' : ''}></label>
<label>Updated since (UTC)<input type="datetime-local" step="1" name="since" value="${localTime(since)}"></label>
<label>Updated before (UTC)<input type="datetime-local" step="1" name="before" value="${localTime(before)}"></label>
<label title="instances no other one started: children of child and map steps are left out"><input type="checkbox" name="top" value="1"${topLevel ? ' checked' : ''}> Top-level only</label>
<button type="submit">Filter</button>
<a href="${ctx.base}/">Clear</a>
</form>`;
}

function errorCell(s: Snapshot): View {
  const e = lastError(s);
  if (!e) return html``;
  const { text, full } = cellText(`${e.code ? `${e.code}: ` : ''}${e.message}`);
  return html`<span class="error-text" title="${e.step ? `step ${e.step}: ` : ''}${full}">${text}</span>`;
}

/** How many attempts of `s` run past their lease or deadline at `now` (their runner died, most likely). */
function overdue(s: Snapshot, now: number): number {
  let n = 0;
  for (const key in s.tasks) if (attemptOverdue(s.tasks[key]!, now)) n++;
  return n;
}

/** The instance's search attributes as `name=value` pairs (strings unquoted), the cell's text. */
function attributesCell(s: Snapshot): View {
  const pairs = Object.entries(s.search ?? {}).map(
    ([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`,
  );
  const { text, full } = cellText(pairs.join(' '));
  return html`<td class="attributes" title="${full}">${text}</td>`;
}

function row(
  ctx: PageContext,
  s: Snapshot,
  columns: readonly InspectorColumn[],
  now: number,
  attributes: boolean,
): View {
  const late = overdue(s, now);
  return html`<tr data-id="${s.id}">
<td class="id"><a href="${instancePath(ctx.base, s.id)}">${s.id}</a></td>
<td>${s.workflow.name}@${String(s.workflow.version)}</td>
<td>${badge(s.status)}${late ? html` ${badge('overdue')}<span class="muted" title="attempts running past their lease or deadline: the next due poll retries them"> ${String(late)}</span>` : ''}</td>
<td class="id active-steps">${s.active.map((id, i) => html`${i ? ', ' : ''}<span>${id}</span>`)}</td>
<td class="last-error">${errorCell(s)}</td>
${attributes ? attributesCell(s) : ''}
${columns.map((col) => {
  const { text, full } = cellText(columnValue(s, col.path));
  return html`<td class="host-col" title="${full}">${text}</td>`;
})}
<td>${String(s.version)}</td>
<td>${timeCell(s.updatedAt)}</td>
<td>${timeCell(s.wakeAt)}</td>
</tr>`;
}

/** The instance list: filters, a table of one page, and paging links. */
export function listPage(ctx: PageContext, v: ListView, flash: Flash | null): View {
  const f = v.filters;
  const filtered = Boolean(
    f.status ||
      f.workflow ||
      f.prefix ||
      f.since !== undefined ||
      f.before !== undefined ||
      f.topLevel ||
      f.where,
  );
  // The attributes column shows when an instance on the page has any (or the page filters by them).
  const attributes = Boolean(f.where) || v.items.some((s) => s.search && Object.keys(s.search).length > 0);
  const span = 8 + v.columns.length + (attributes ? 1 : 0);
  const now = v.now ?? Date.now();
  const body = html`<h1>Instances</h1>
${filterForm(ctx, v)}
${v.whereError ? html`<p class="error-text" id="where-error" role="alert">Attributes filter: ${v.whereError}</p>` : ''}
${
  v.scanned !== undefined
    ? html`<p class="muted" id="scan-note">Read ${String(v.scanned)} instances (up to ${v.next ?? ''}) and ${String(
        v.items.length,
      )} matched the filters; the stores list by id, so the next page reads on from there.</p>`
    : ''
}
<table id="instances">
<thead><tr><th>id</th><th>workflow@version</th><th>status</th><th>active steps</th><th>last error</th>${attributes ? html`<th>attributes</th>` : ''}${v.columns.map(
    (col) => html`<th>${col.label}</th>`,
  )}<th>version</th><th>updated (UTC)</th><th>wakeAt (UTC)</th></tr></thead>
<tbody>
${
  v.items.length
    ? v.items.map((s) => row(ctx, s, v.columns, now, attributes))
    : html`<tr><td colspan="${String(span)}" class="muted">${filtered ? 'No instance matches these filters.' : 'No instances.'}</td></tr>`
}
</tbody>
</table>
<nav class="pager">
${f.cursor ? html`<a href="${ctx.base}/${query(f)}">First page</a>` : ''}
${v.next ? html`<a rel="next" href="${ctx.base}/${query(f, v.next)}">Next page →</a>` : ''}
</nav>
${f.since !== undefined || f.before !== undefined ? html`<p class="muted">Updated ${f.since !== undefined ? `since ${time(f.since)}` : ''} ${f.before !== undefined ? `before ${time(f.before)}` : ''} (UTC).</p>` : ''}`;
  return layout(ctx, 'Instances', body, { flash });
}
