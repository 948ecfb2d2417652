import { type MapProgress, mapProgressText } from '@stepfold/engine';
import { html } from 'hono/html';
import type { Family, MapItemView, MapStepView } from '../family.js';
import { badge, instancePath, type View } from './format.js';
import type { PageContext } from './layout.js';

/** The anchor of a map's block in the children section (step ids are user data: percent-encoded). */
export const mapAnchor = (step: string) => `map-${encodeURIComponent(step)}`;

/** A link to an instance's page with its status badge. */
function instanceLink(ctx: PageContext, id: string, status: string | undefined): View {
  return html`<a class="id" href="${instancePath(ctx.base, id)}">${id}</a>${status ? html` ${badge(status)}` : ''}`;
}

/**
 * Under the title of a child: the parent it reports to, linked, with the step (and map item) that
 * started it; nothing for an instance that has no parent.
 */
export function parentLine(ctx: PageContext, f: Family): View | string {
  const p = f.parent;
  if (!p) return '';
  return html`<p class="parent" id="parent">Child of ${instanceLink(ctx, p.id, p.status)} <span class="muted">(${p.workflow})</span>, started by step <code>${p.step}</code>${
    p.item === undefined ? '' : html`, item ${String(p.item)}`
  }${p.phase === 'compensate' ? html` <span class="muted">(being reverted)</span>` : ''}</p>`;
}

/** A percentage for a bar segment's width. */
const share = (n: number, total: number) => `width:${total > 0 ? ((100 * n) / total).toFixed(2) : '0'}%`;

/**
 * A map's progress as one stacked bar: done, undone (completed, then reverted by a rollback),
 * failed, running; the rest (not started) is the track.
 */
function bar(step: string, p: MapProgress): View {
  const undone = p.undone ?? 0;
  const words = `${p.done} of ${p.total} done${undone ? ` (${undone} undone)` : ''}, ${p.failed} failed, ${p.running} running, ${p.pending} not started`;
  return html`<div class="bar" role="img" aria-label="${words}" title="${words}" data-step="${step}"><span class="s-done" style="${share(
    p.done - undone,
    p.total,
  )}"></span>${undone ? html`<span class="s-compensated" style="${share(undone, p.total)}"></span>` : ''}<span class="s-failed" style="${share(p.failed, p.total)}"></span><span class="s-running" style="${share(
    p.running,
    p.total,
  )}"></span></div>`;
}

/** Listed items: each index linked to its child's page (a map of workflows) with its status. */
function itemList(
  ctx: PageContext,
  what: string,
  shown: readonly MapItemView[],
  count: number,
): View | string {
  if (!count) return '';
  const more = count - shown.length;
  return html`<p class="items" data-items="${what}">${what} items: ${shown.map(
    (it) =>
      html`<span class="item">${
        it.id === undefined
          ? String(it.index)
          : html`<a href="${instancePath(ctx.base, it.id)}" title="${it.id}">${String(it.index)}</a>${
              it.status ? html` ${badge(it.status)}` : ''
            }`
      }</span> `,
  )}${more > 0 ? html`<span class="muted">and ${String(more)} more</span>` : ''}</p>`;
}

function mapBlock(ctx: PageContext, m: MapStepView): View {
  const p = m.progress;
  const what = m.workflow
    ? html`map of <code>${m.workflow}</code>`
    : m.prefix
      ? 'map of child workflows'
      : 'map';
  const dispatched = p.total - p.pending;
  return html`<div class="map" id="${mapAnchor(m.step)}" data-step="${m.step}">
<h3><code>${m.step}</code> ${what} ${badge(m.status)}</h3>
${bar(m.step, p)}
<p class="counts">${mapProgressText(p)}${p.pending ? ` · ${p.pending} not started` : ''}</p>
${itemList(ctx, 'Failed', m.failedShown, p.failed)}
${itemList(ctx, 'Running', m.runningShown, p.running)}
${
  m.prefix
    ? html`<p><a class="all-children" href="${ctx.base}/?prefix=${encodeURIComponent(m.prefix)}">All ${String(
        dispatched,
      )} children started so far, in the instance list</a> <span class="muted">(ids <code>${m.prefix}</code>&lt;item&gt;)</span></p>`
    : ''
}
</div>`;
}

/**
 * The children section: each child step's child instance (linked, with its status), then each map
 * with its progress bar, counts, failed and running items (linked for a map of workflows) and a
 * link to all its children in the instance list (by id prefix). Undefined when there are none.
 */
export function childrenSection(ctx: PageContext, f: Family): View | undefined {
  if (!f.children.length) return undefined;
  const steps = f.children.flatMap((c) => (c.kind === 'child' ? [c] : []));
  const maps = f.children.flatMap((c) => (c.kind === 'map' ? [c] : []));
  return html`<section id="children">
${
  steps.length
    ? html`<table id="child-steps">
<thead><tr><th>step</th><th>workflow</th><th>step status</th><th>child instance</th></tr></thead>
<tbody>${steps.map(
        (
          c,
        ) => html`<tr data-step="${c.step}"><td class="id">${c.step}</td><td class="id">${c.workflow ?? '—'}</td>
<td>${badge(c.status)}</td><td>${instanceLink(ctx, c.id, c.childStatus)}${
          c.pivot ? html` <span class="muted">past its pivot</span>` : ''
        }</td></tr>`,
      )}</tbody>
</table>`
    : ''
}
${maps.map((m) => mapBlock(ctx, m))}
</section>`;
}
