import {
  attemptOverdue,
  type ErrorInfo,
  type Snapshot,
  type StreamTail,
  TAIL_ENTRIES,
  type WorkflowDefinition,
} from '@stepfold/engine';
import { html } from 'hono/html';
import { cellText } from '../columns.js';
import type { StepLabel } from '../step-states.js';
import { badge, collapsedJson, json, timeCell, type View } from './format.js';
import { stepAnchor } from './overview.js';

const none = (what: string) => html`<p class="muted">No ${what}.</p>`;

function errorLine(e: ErrorInfo | undefined): View {
  if (!e) return html`<span class="muted">—</span>`;
  return html`<span class="error-text">${e.code ? html`<code>${e.code}</code> ` : ''}${e.message}${
    e.step ? html` <span class="muted">(step ${e.step})</span>` : ''
  }${e.retryable === false ? html` <span class="muted">not retryable</span>` : ''}</span>`;
}

/** The steps in definition order (then any the snapshot has that the definition does not), coloured by state. */
export function stepsTable(
  s: Snapshot,
  def: WorkflowDefinition | undefined,
  labels: Map<string, StepLabel>,
  focus: string | undefined,
  value: (output: unknown) => View = collapsedJson,
): View {
  const ids = [...labels.keys()];
  if (!ids.length) return none('steps');
  return html`<table id="steps">
<thead><tr><th>step</th><th>kind</th><th>state</th><th>status</th><th>iteration</th><th>attempt</th><th>started</th><th>finished</th><th>error</th><th>output</th></tr></thead>
<tbody>${ids.map((id) => {
    const st = Object.hasOwn(s.steps, id) ? s.steps[id] : undefined;
    const kind = def && Object.hasOwn(def.steps, id) ? def.steps[id]?.kind : undefined;
    const state = labels.get(id) ?? 'not entered';
    const compensation = st?.compensation?.error;
    return html`<tr data-step="${id}" id="${stepAnchor(id)}"${id === focus ? html` class="focus"` : ''}>
<td class="id">${id}${s.active.includes(id) ? html` <span class="badge s-active">active</span>` : ''}</td>
<td>${kind ?? html`<span class="muted">?</span>`}</td>
<td>${state === 'not entered' ? html`<span class="muted">not entered</span>` : badge(state)}</td>
<td>${st ? badge(st.status) : html`<span class="muted">—</span>`}</td>
<td>${st ? String(st.iteration) : ''}</td>
<td>${st ? String(st.attempt) : ''}</td>
<td>${st ? timeCell(st.startedAt) : ''}</td>
<td>${st ? timeCell(st.finishedAt) : ''}</td>
<td>${errorLine(st?.error)}${compensation ? html`<br>compensation: ${errorLine(compensation)}` : ''}</td>
<td>${st ? value(st.output) : ''}</td>
</tr>`;
  })}</tbody>
</table>`;
}

/** The instance's error, its compensation error and every step error, in one place. */
export function errorsSection(s: Snapshot): View {
  const stepErrors = Object.entries(s.steps).filter(([, st]) => st.error || st.compensation?.error);
  if (!s.error && !s.compensationError && !stepErrors.length) return none('errors');
  return html`<dl class="facts" id="errors">
${s.error ? html`<dt>error</dt><dd>${errorLine(s.error)}</dd>` : ''}
${s.compensationError ? html`<dt>compensationError</dt><dd>${errorLine(s.compensationError)}</dd>` : ''}
${stepErrors.map(
  ([id, st]) =>
    html`<dt>step ${id}</dt><dd>${errorLine(st.error)}${
      st.compensation?.error ? html`<br>compensation: ${errorLine(st.compensation.error)}` : ''
    }</dd>`,
)}
</dl>`;
}

/**
 * Handler runs in flight or queued for workers. One running past its lease or deadline at `now`
 * is marked overdue: its runner stopped renewing it (it died, most likely), and the next due poll
 * retries it.
 */
export function tasksTable(s: Snapshot, now: number = Date.now()): View {
  const tasks = Object.entries(s.tasks);
  if (!tasks.length) return none('tasks in flight');
  return html`<table id="tasks">
<thead><tr><th>key</th><th>step</th><th>phase</th><th>handler</th><th>attempt</th><th>state</th><th>dispatched</th><th>deadline</th><th>lease until</th><th>by version</th></tr></thead>
<tbody>${tasks.map(
    ([key, t]) => html`<tr${attemptOverdue(t, now) ? html` class="overdue"` : ''}>
<td class="id">${key}</td><td class="id">${t.step}</td><td>${t.phase}</td><td class="id">${t.handler}</td>
<td>${String(t.attempt)}</td>
<td>${t.queued ? badge('queued') : attemptOverdue(t, now) ? badge('overdue') : badge('running')}${t.detached ? html` <span class="muted">detached</span>` : ''}</td>
<td>${timeCell(t.dispatchedAt)}</td><td>${timeCell(t.deadline)}</td><td>${t.leaseUntil === undefined ? html`<span class="muted">—</span>` : timeCell(t.leaseUntil)}</td><td>${String(t.dispatchVersion)}</td>
</tr>`,
  )}</tbody>
</table>`;
}

/** Durable timers: retries, sleeps, timeouts. */
export function timersTable(s: Snapshot): View {
  if (!s.timers.length) return none('timers');
  return html`<table id="timers">
<thead><tr><th>kind</th><th>step</th><th>phase</th><th>at (UTC)</th></tr></thead>
<tbody>${s.timers.map(
    (t) =>
      html`<tr><td>${t.kind}</td><td class="id">${t.step}</td><td>${t.phase ?? 'run'}</td><td>${timeCell(t.at)}</td></tr>`,
  )}</tbody>
</table>`;
}

/** Signals buffered until a step listens for them. */
export function inboxTable(s: Snapshot, value: (payload: unknown) => View = json): View {
  if (!s.inbox.length) return none('buffered signals');
  return html`<table id="inbox">
<thead><tr><th>name</th><th>signal id</th><th>at (UTC)</th><th>payload</th></tr></thead>
<tbody>${s.inbox.map(
    (m) => html`<tr><td class="id">${m.name}</td><td class="id">${m.id ?? '—'}</td><td>${timeCell(m.at)}</td>
<td>${value(m.payload)}</td></tr>`,
  )}</tbody>
</table>`;
}

/** The bounded transition log as a timeline, newest first. */
export function logTimeline(s: Snapshot): View {
  if (!s.log.length) return none('transitions recorded');
  const entries = [...s.log].reverse();
  return html`<ol class="timeline" id="log">${entries.map(
    (e) =>
      html`<li><span class="v">v${String(e.v)}</span> ${timeCell(e.at)} <strong>${e.type}</strong>${
        e.step ? html` step <code>${e.step}</code>` : ''
      }${e.attempt !== undefined ? html` attempt ${String(e.attempt)}` : ''}${
        e.detail ? html` — <span class="detail">${e.detail}</span>` : ''
      }</li>`,
  )}</ol>`;
}

/**
 * The end of the instance's stream (what a model or a long step wrote last), oldest first: each
 * chunk's offset, step and attempt and its data; a reset where a newer attempt superseded a step's
 * chunks. Absent when the store has no stream or the instance wrote none.
 */
export function streamSection(tail: StreamTail): View {
  const first = tail.entries[0]?.offset ?? 0;
  return html`<p class="muted" id="stream-range">Offsets ${String(first)}–${String(tail.last)}${
    tail.entries.length >= TAIL_ENTRIES
      ? ` (the last ${String(tail.entries.length)} entries; the earlier ones stay in the store)`
      : ''
  }.</p>
<table id="stream">
<thead><tr><th>offset</th><th>step</th><th>attempt</th><th>data</th></tr></thead>
<tbody>${tail.entries.map((e) => {
    if (e.type === 'reset')
      return html`<tr class="reset" data-offset="${String(e.offset)}"><td>${String(e.offset)}</td><td class="id">${e.step}</td><td>${String(e.attempt)}</td><td class="muted">attempt ${String(e.attempt)} began: earlier attempts' chunks dropped</td></tr>`;
    const { text, full } = cellText(e.data);
    return html`<tr data-offset="${String(e.offset)}"><td>${String(e.offset)}</td><td class="id">${e.step}</td><td>${String(e.attempt)}</td><td title="${full}"><code>${text}</code></td></tr>`;
  })}</tbody>
</table>`;
}
