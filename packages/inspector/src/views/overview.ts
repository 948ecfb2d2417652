import type { Snapshot, WorkflowDefinition } from '@stepfold/engine';
import { mapProgress, mapProgressText } from '@stepfold/engine';
import { html } from 'hono/html';
import type { StepLabel } from '../step-states.js';
import { badge, type View } from './format.js';

/** The anchor of a step's row in the steps table (ids are user data: percent-encoded). */
export const stepAnchor = (id: string) => `step-${encodeURIComponent(id)}`;

const NEEDS_LOOK: ReadonlySet<StepLabel> = new Set(['failed', 'running', 'waiting']);

/**
 * The step an operator looks at first: a failed one (the latest to fail), else the first active
 * one. The page links to it from the top and scrolls the diagram to it.
 */
export function focusStep(s: Snapshot, labels: Map<string, StepLabel>): string | undefined {
  const failed = [...labels].filter(([, l]) => l === 'failed').map(([id]) => id);
  const at = (id: string) => s.steps[id]?.finishedAt ?? s.steps[id]?.startedAt ?? 0;
  failed.sort((a, b) => at(b) - at(a));
  return failed[0] ?? s.active.find((id) => labels.has(id)) ?? s.active[0];
}

/** What one active or failed step is doing, in a few words. */
function doing(s: Snapshot, def: WorkflowDefinition | undefined, id: string, label: StepLabel): string {
  const st = s.steps[id];
  const step = def && Object.hasOwn(def.steps, id) ? def.steps[id] : undefined;
  if (label === 'failed') {
    const e = st?.error ?? st?.compensation?.error;
    return e ? `${e.code ? `${e.code}: ` : ''}${e.message}` : `status ${st?.status ?? 'failed'}`;
  }
  // A child step waits on its child, a map on its items: say which, and how far along.
  if (st?.child && step?.kind === 'child') return `child ${st.child.id} ${label}`;
  if (st?.map) return `items: ${mapProgressText(mapProgress(st.map))}`;
  if (label === 'running') return step?.kind === 'parallel' ? 'branches running' : 'handler running';
  if (s.timers.some((t) => t.step === id && t.kind === 'retry')) return 'waiting to retry';
  switch (step?.kind) {
    case 'human':
      return 'waiting for a decision';
    case 'wait':
    case 'collect':
      return `waiting for signal ${step.signal}`;
    case 'sleep':
      return 'sleeping';
    case 'parallel':
      return 'branches waiting';
    default:
      return 'waiting';
  }
}

/**
 * The top of the instance page: what needs a look (failed and active steps, each linked to its
 * row) and every step as a chip in definition order, so a tall workflow's state reads in one line.
 */
export function overview(
  s: Snapshot,
  def: WorkflowDefinition | undefined,
  labels: Map<string, StepLabel>,
  focus: string | undefined,
): View {
  const look = [...labels].filter(([, l]) => NEEDS_LOOK.has(l));
  return html`<section class="overview" id="overview">
${
  look.length
    ? html`<ul class="attention" id="attention">${look.map(
        ([
          id,
          label,
        ]) => html`<li class="${id === focus ? 'focus' : ''}" data-step="${id}" data-state="${label}">${badge(label)}
<a href="#${stepAnchor(id)}"><code>${id}</code></a> <span class="${label === 'failed' ? 'error-text' : 'muted'}">${doing(
          s,
          def,
          id,
          label,
        )}</span></li>`,
      )}</ul>`
    : ''
}
<ol class="strip" id="step-strip" aria-label="steps in definition order">${[...labels].map(
    ([id, label]) =>
      html`<li class="chip s-${label === 'not entered' ? 'none' : label}${id === focus ? ' focus' : ''}" data-step="${id}" data-state="${label}"><a href="#${stepAnchor(
        id,
      )}" title="${id}: ${label}">${id}</a></li>`,
  )}</ol>
</section>`;
}
