import type { Snapshot, StreamTail, WorkflowDefinition } from '@stepfold/engine';
import { nodeIds, tokenUsage, toMermaid } from '@stepfold/engine';
import { html } from 'hono/html';
import { childStatuses, type Family } from '../family.js';
import { stepLabels } from '../step-states.js';
import { type ActionsView, actionForms } from './action-forms.js';
import { childrenSection, parentLine } from './family.js';
import { badge, collapsedJson, instancePath, json, timeCell, type View } from './format.js';
import {
  errorsSection,
  inboxTable,
  logTimeline,
  stepsTable,
  streamSection,
  tasksTable,
  timersTable,
} from './instance-sections.js';
import { type Flash, layout, type PageContext } from './layout.js';
import { focusStep, overview } from './overview.js';
import { valueView } from './payloads.js';

/** The model tokens the instance counted (see the engine's `tokenUsage`), when it counts any. */
function tokensFact(s: Snapshot): View | string {
  const t = tokenUsage(s);
  if (!t) return '';
  const calls = `${t.modelCalls} model call${t.modelCalls === 1 ? '' : 's'}`;
  return html`<dt>tokens</dt><dd id="tokens">${String(t.inputTokens)} in, ${String(t.outputTokens)} out, ${String(t.totalTokens)} total over ${calls}</dd>`;
}

function facts(ctx: PageContext, s: Snapshot): View {
  return html`<dl class="facts" id="facts">
<dt>workflow</dt><dd>${s.workflow.name}@${String(s.workflow.version)} <span class="muted">${s.workflow.hash}</span></dd>
<dt>status</dt><dd>${badge(s.status)}${s.reason ? html` — reason: ${s.reason}` : ''}</dd>
<dt>version</dt><dd id="version">${String(s.version)}</dd>
<dt>run</dt><dd>${String(s.run)}</dd>
${tokensFact(s)}
${
  s.parent
    ? html`<dt>parent</dt><dd><a href="${instancePath(ctx.base, s.parent.id)}">${s.parent.id}</a> step ${s.parent.step}${
        s.parent.item === undefined ? '' : html`, item ${String(s.parent.item)}`
      }</dd>`
    : ''
}
<dt>active</dt><dd>${s.active.length ? s.active.join(', ') : html`<span class="muted">—</span>`}</dd>
<dt>created</dt><dd>${timeCell(s.createdAt)}</dd>
<dt>updated</dt><dd>${timeCell(s.updatedAt)}</dd>
<dt>wakeAt</dt><dd>${timeCell(s.wakeAt)}</dd>
${s.saga ? html`<dt>saga</dt><dd>${s.saga.mode}; to compensate: ${s.saga.queue.join(', ') || '—'}</dd>` : ''}
</dl>`;
}

/**
 * The diagram: toMermaid's source (with the inspector's state corrections), which the browser
 * bundle (when served) turns into an SVG in place; without it the source stays readable text, and
 * the steps table carries the colours. The box has a bounded height; the page scrolls it to the
 * focus step's node, so a tall workflow's failed step is in view without scrolling the page.
 */
function diagram(
  s: Snapshot,
  def: WorkflowDefinition | undefined,
  o: { focus: string | undefined; rendered: boolean; family: Family },
): View {
  const { focus, rendered, family } = o;
  if (!def) {
    return html`<p class="muted">No definition of ${s.workflow.name} v${String(s.workflow.version)} was given to the inspector, so there is no diagram.</p>`;
  }
  let source: string;
  try {
    source = toMermaid(def, s, { children: childStatuses(family) });
  } catch (e) {
    return html`<p class="flash error">The diagram could not be drawn: ${(e as Error).message}</p>`;
  }
  return html`<div class="diagram" id="diagram-box" data-focus="${focus ? nodeIds.step(focus) : ''}"><pre class="mermaid" id="diagram">${source}</pre></div>
${
  rendered
    ? html`<details><summary>Mermaid source</summary><pre id="diagram-source">${source}</pre></details>`
    : html`<p class="muted">Paste the source into any Mermaid viewer, or install the <code>mermaid</code> package beside the inspector to see it drawn here.</p>`
}`;
}

/** Everything the instance page shows. */
export interface InstanceView {
  snapshot: Snapshot;
  definition: WorkflowDefinition | undefined;
  actions: ActionsView;
  /** Its parent and children, with the statuses loaded from the store. */
  family: Family;
  /** Whether the inspector has a payload store to show offloaded values from. */
  payloads: boolean;
  /** The end of the instance's stream, when the store has streams and it wrote any. */
  stream?: StreamTail | null | undefined;
  /** When the page is drawn: a task running past its lease or deadline then is marked overdue (default now). */
  now?: number | undefined;
}

/**
 * The instance page, most urgent first: its parent (for a child), what needs a look (failed and
 * active steps, linked) and the steps as a strip, the actions, then the diagram and steps table
 * (both centred on the focus step), its children (child steps, maps' progress), errors, tasks,
 * timers, inbox, the stream's last entries, input/output, log, raw snapshot.
 */
export function instancePage(ctx: PageContext, v: InstanceView, flash: Flash | null): View {
  const s = v.snapshot;
  const labels = stepLabels(s, v.definition, childStatuses(v.family));
  const children = childrenSection(ctx, v.family);
  const focus = focusStep(s, labels);
  // Offloaded values show as reference blocks whose link fetches the value on demand.
  const value =
    (plain: (value: unknown) => View = json) =>
    (x: unknown) =>
      valueView(ctx, s.id, x, { configured: v.payloads, plain });
  const body = html`<p><a href="${ctx.base}/">← Instances</a></p>
<h1><span id="instance-id">${s.id}</span> ${badge(s.status)}</h1>
${parentLine(ctx, v.family)}
${overview(s, v.definition, labels, focus)}
<h2>Actions</h2>
${actionForms(ctx, s, v.actions)}
<h2>Diagram</h2>
${diagram(s, v.definition, { focus, rendered: ctx.mermaidUrl !== null, family: v.family })}
<h2>Steps</h2>
${stepsTable(s, v.definition, labels, focus, value(collapsedJson))}
${children ? html`<h2>Children</h2>${children}` : ''}
<h2>Errors</h2>
${errorsSection(s)}
<h2>Instance</h2>
${facts(ctx, s)}
<h2>Tasks in flight</h2>
${tasksTable(s, v.now)}
<h2>Timers</h2>
${timersTable(s)}
<h2>Inbox</h2>
${inboxTable(s, value())}
${v.stream ? html`<h2>Stream</h2>${streamSection(v.stream)}` : ''}
<h2>Input</h2>
${value()(s.input)}
${s.output !== undefined ? html`<h2>Output</h2>${value()(s.output)}` : ''}
<h2>Transition log</h2>
${logTimeline(s)}
<h2>Raw snapshot</h2>
<details id="raw"><summary>Show the stored JSON (version ${String(s.version)})</summary>${json(s)}</details>`;
  return layout(ctx, s.id, body, { flash, diagram: v.definition !== undefined });
}
