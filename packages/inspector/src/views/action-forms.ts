import { isTerminal, type Snapshot } from '@stepfold/engine';
import { html } from 'hono/html';
import type { PendingDecision } from '../definitions.js';
import { instancePath, type View } from './format.js';
import type { PageContext } from './layout.js';

/** What the action forms need besides the snapshot. */
export interface ActionsView {
  decisions: readonly PendingDecision[];
  signals: readonly string[];
  /** False when the inspector has no definition for the instance: its runner would refuse any event. */
  known: boolean;
}

/** Hidden fields every action form carries: the CSRF token and the version the page showed. */
function hidden(ctx: PageContext, s: Snapshot): View {
  return html`<input type="hidden" name="_csrf" value="${ctx.csrf}">
<input type="hidden" name="version" value="${String(s.version)}">`;
}

function form(ctx: PageContext, s: Snapshot, action: string, title: string, body: View): View {
  return html`<form method="post" action="${instancePath(ctx.base, s.id)}/${action}" data-action="${action}">
<h3>${title}</h3>
${hidden(ctx, s)}
${body}
</form>`;
}

/** The action forms that apply to the instance's status (none for a finished one). */
export function actionForms(ctx: PageContext, s: Snapshot, v: ActionsView): View {
  if (isTerminal(s.status))
    return html`<p class="muted">The instance is ${s.status}: no event applies any more.</p>`;
  if (!v.known) {
    return html`<p class="flash error">The inspector was not given the definition of ${s.workflow.name} v${String(
      s.workflow.version,
    )}, so it cannot send events to this instance.</p>`;
  }
  const dlqSteps = Object.entries(s.steps)
    .filter(([, st]) => st.status === 'dlq' || st.status === 'compensation-dlq')
    .map(([id]) => id);
  return html`<div class="actions">
${v.decisions.map((d) =>
  form(
    ctx,
    s,
    'decide',
    `Decide human step ${d.step}`,
    html`<input type="hidden" name="step" value="${d.step}">
<label>By (optional)<input name="by" autocomplete="off"></label>
<label>Comment or reason (optional)<input name="comment" autocomplete="off"></label>
<span><button type="submit" name="decision" value="approve">Approve</button>
<button class="danger" type="submit" name="decision" value="reject">Reject</button></span>`,
  ),
)}
${
  s.status === 'dlq'
    ? form(
        ctx,
        s,
        'requeue',
        'Requeue from dlq',
        html`<label>Step<select name="step"><option value="">every parked step</option>
${dlqSteps.map((id) => html`<option value="${id}">${id}</option>`)}</select></label>
<label>Input patch (JSON object merged into the workflow input, optional)<textarea name="patch" rows="3" placeholder='{"amount": 10}'></textarea></label>
<button type="submit">Requeue</button>`,
      )
    : ''
}
${form(
  ctx,
  s,
  'signal',
  'Send a signal',
  html`<label>Name<input name="name" list="signal-names" required autocomplete="off"></label>
<datalist id="signal-names">${v.signals.map((n) => html`<option value="${n}"></option>`)}</datalist>
<label>Payload (JSON, optional)<textarea name="payload" rows="3" placeholder='{"ok": true}'></textarea></label>
<button type="submit">Send signal</button>`,
)}
${form(
  ctx,
  s,
  'cancel',
  'Cancel (roll back, end cancelled)',
  html`<label>Reason (optional)<input name="reason" autocomplete="off"></label>
<button class="danger" type="submit">Cancel instance</button>`,
)}
${form(
  ctx,
  s,
  'abort',
  'Abort (end aborted at once, no rollback)',
  html`<label>Reason (optional)<input name="reason" autocomplete="off"></label>
<button class="danger" type="submit">Abort instance</button>`,
)}
</div>`;
}
