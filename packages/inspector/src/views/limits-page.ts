import type { FlowKeyState } from '@stepfold/engine';
import { html } from 'hono/html';
import { instancePath, timeCell, type View } from './format.js';
import { type Flash, layout, type PageContext } from './layout.js';

/** What the limits page shows: one page of the store's flow counters, or why there are none. */
export type LimitsView =
  | {
      kind: 'counters';
      items: readonly FlowKeyState[];
      next: string | null;
      paged: boolean;
      scope: string | null;
    }
  | { kind: 'no-flow' };

// A holder is an instance id (a workflow limit) or an attempt, `<instance>/<run>/<step>/<iteration>
// [/<item>]#<phase>#<attempt>` (a step limit): the instance that holds the slot is read off its front.
const ATTEMPT_HOLDER = /^(.+)\/\d+\/[^/#]+\/\d+(?:\/\d+)?#[^#]+#\d+$/;

function holderInstance(holder: string): string {
  return ATTEMPT_HOLDER.exec(holder)?.[1] ?? holder;
}

function limitText(c: FlowKeyState): string {
  return c.periodMs === undefined ? `${c.limit} at once` : `${c.limit} per ${c.periodMs / 1000} s`;
}

function holders(ctx: PageContext, c: FlowKeyState): View {
  if (!c.holders.length) return html`<span class="muted">none</span>`;
  return html`<ul class="holders">${c.holders.map(
    (h) =>
      html`<li><a class="id" href="${instancePath(ctx.base, holderInstance(h.holder))}">${h.holder}</a> <span class="muted">${
        c.periodMs === undefined ? 'until' : 'counts until'
      }</span> ${timeCell(h.until)}</li>`,
  )}</ul>`;
}

function waiting(ctx: PageContext, c: FlowKeyState): View {
  if (!c.waiting.length) return html`<span class="muted">none</span>`;
  return html`<ul class="waiting">${c.waiting.map(
    (w) =>
      html`<li><a class="id" href="${instancePath(ctx.base, w.instance)}">${w.instance}</a> <span class="muted">since</span> ${timeCell(
        w.since,
      )}</li>`,
  )}</ul>`;
}

function row(ctx: PageContext, c: FlowKeyState): View {
  return html`<tr data-scope="${c.scope}" data-key="${c.key}">
<td><a href="${ctx.base}/limits?scope=${encodeURIComponent(c.scope)}">${c.scope}</a></td>
<td class="id">${c.key === '' ? html`<span class="muted">(one counter)</span>` : c.key}</td>
<td>${limitText(c)}</td>
<td data-held="${String(c.holders.length)}">${String(c.holders.length)} / ${String(c.limit)}${holders(ctx, c)}</td>
<td data-waiting="${String(c.waiting.length)}">${String(c.waiting.length)}${waiting(ctx, c)}</td>
</tr>`;
}

/**
 * The limits page: each concurrency or rate-limit key with holders or waiters, the slots held out
 * of its limit and the instances waiting for it, oldest first.
 */
export function limitsPage(ctx: PageContext, v: LimitsView, flash: Flash | null): View {
  if (v.kind === 'no-flow') {
    const body = html`<h1>Limits</h1>
<p id="no-flow">This store has no flow counters (<code>store.flow</code>): concurrency and rate limits need a store with the flow capability.</p>`;
    return layout(ctx, 'Limits', body, { flash });
  }
  const self =
    v.scope === null ? `${ctx.base}/limits` : `${ctx.base}/limits?scope=${encodeURIComponent(v.scope)}`;
  const nextHref = v.next
    ? `${self}${v.scope === null ? '?' : '&'}cursor=${encodeURIComponent(v.next)}`
    : null;
  const body = html`<h1>Limits${v.scope === null ? '' : html` of <code>${v.scope}</code>`}</h1>
<p class="muted">Keys with slots held or instances waiting. A lapsed lease frees its slot by itself; a waiting instance is woken when a slot frees.</p>
${v.scope === null ? '' : html`<p><a href="${ctx.base}/limits">All scopes</a></p>`}
<table id="limits">
<thead><tr><th>scope</th><th>key</th><th>limit</th><th>held</th><th>waiting</th></tr></thead>
<tbody>
${v.items.length ? v.items.map((c) => row(ctx, c)) : html`<tr><td colspan="5" class="muted">No key is held or waited for.</td></tr>`}
</tbody>
</table>
<nav class="pager">
${v.paged ? html`<a href="${self}">First page</a>` : ''}
${nextHref ? html`<a rel="next" href="${nextHref}">Next page →</a>` : ''}
</nav>`;
  return layout(ctx, 'Limits', body, { flash });
}
