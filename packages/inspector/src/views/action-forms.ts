import type { ActionRefusal, DeclaredSignal, PendingDecision } from '@stepfold/engine';
import { isTerminal, type Snapshot } from '@stepfold/engine';
import { html } from 'hono/html';
import { compactSchema, jsonSchemaOf } from '../payload-schema.js';
import { instancePath, type View } from './format.js';
import type { PageContext } from './layout.js';

/** What the action forms need besides the snapshot. */
export interface ActionsView {
  decisions: readonly PendingDecision[];
  /** The definition's signals with their declared schemas (the form leaves out decisions: they have their own). */
  signals: readonly DeclaredSignal[];
  /** Why cancel is not offered (past a completed pivot, already cancelling), from the engine. */
  cancelRefusal: ActionRefusal | undefined;
  /** False when the inspector has no definition for the instance: its runner would refuse any event. */
  known: boolean;
}

/** What each declared signal's payload must look like, shown beside the select (one block per name). */
function signalShapes(signals: readonly DeclaredSignal[]): View {
  return html`<div class="shapes" id="signal-shapes">${signals.map((sig) => {
    const schema = jsonSchemaOf(sig.schema);
    const where = sig.steps.length ? `listened for by ${sig.steps.join(', ')}` : 'declared';
    return html`<div class="shape" data-signal="${sig.name}">
<span class="muted">${sig.name}: ${where}</span>
${
  schema
    ? html`<code class="schema">${compactSchema(schema)}</code>
<details><summary>JSON Schema</summary><pre>${JSON.stringify(schema, null, 2)}</pre></details>`
    : sig.schema
      ? html`<span class="muted">payload checked by its declared schema (${sig.schema['~standard'].vendor})</span>`
      : html`<span class="muted">no declared schema: any JSON</span>`
}</div>`;
  })}</div>`;
}

/** The signal form: a select of the definition's signals, their payload shapes, a JSON payload. */
function signalForm(ctx: PageContext, s: Snapshot, signals: readonly DeclaredSignal[]): View {
  const name = signals.length
    ? html`<label>Name<select name="name" required>${signals.map(
        (sig) => html`<option value="${sig.name}">${sig.name}</option>`,
      )}</select></label>`
    : html`<label>Name<input name="name" required autocomplete="off"></label>`;
  return form(
    ctx,
    s,
    'signal',
    'Send a signal',
    html`${name}
${signalShapes(signals)}
<label>Payload (JSON, optional)<textarea name="payload" rows="3" placeholder='{"ok": true}'></textarea></label>
<button type="submit">Send signal</button>`,
  );
}

/** Who a decision is recorded as: the signed-in user, else a name typed here. */
function approver(ctx: PageContext): View {
  return ctx.user
    ? html`<p class="approver">Recorded as <strong>${ctx.user}</strong></p>`
    : html`<label>By (optional)<input name="by" autocomplete="off"></label>`;
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
${approver(ctx)}
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
${signalForm(
  ctx,
  s,
  v.signals.filter((sig) => !sig.decision),
)}
${
  v.cancelRefusal
    ? html`<div class="refusal" id="cancel-refusal" data-code="${v.cancelRefusal.code}"><h3>Cancel is not offered</h3>
<p>${v.cancelRefusal.message}.</p></div>`
    : form(
        ctx,
        s,
        'cancel',
        'Cancel (roll back, end cancelled)',
        html`<label>Reason (optional)<input name="reason" autocomplete="off"></label>
<button class="danger" type="submit">Cancel instance</button>`,
      )
}
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
