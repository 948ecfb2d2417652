import type { Status } from '@stepfold/engine';
import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';

/** What a view returns: Hono's escaped HTML (interpolated values are escaped, nested views are not). */
export type View = HtmlEscapedString | Promise<HtmlEscapedString>;

/** An epoch-ms time as `YYYY-MM-DD HH:MM:SS.mmm` UTC, or a dash. */
export function time(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString().replace('T', ' ').replace('Z', '');
}

/** A `<time>` element: readable UTC text, the epoch ms in its title. */
export function timeCell(ms: number | null | undefined): View {
  if (ms === null || ms === undefined) return html`<span class="muted">—</span>`;
  return html`<time title="${String(ms)} ms, UTC">${time(ms)}</time>`;
}

/** JSON as pretty-printed, escaped text in a `<pre>`; `undefined` shows as a dash. */
export function json(value: unknown): View {
  if (value === undefined) return html`<span class="muted">—</span>`;
  return html`<pre class="json">${JSON.stringify(value, null, 2)}</pre>`;
}

/** JSON in a collapsed `<details>` whose summary is a one-line preview. */
export function collapsedJson(value: unknown, label?: string): View {
  if (value === undefined) return html`<span class="muted">—</span>`;
  const text = JSON.stringify(value);
  const preview = text.length > 60 ? `${text.slice(0, 57)}…` : text;
  return html`<details class="json"><summary>${label ?? preview}</summary>${json(value)}</details>`;
}

/** The instance statuses, for filters and badges. */
export const STATUSES: readonly Status[] = [
  'running',
  'waiting',
  'compensating',
  'dlq',
  'completed',
  'failed',
  'cancelled',
  'aborted',
];

/** A coloured status badge (instance or step status; the class is from a fixed list, not user data). */
export function badge(status: string): View {
  const known = /^[a-z-]+$/.test(status) ? status : 'unknown';
  return html`<span class="badge s-${known}">${status}</span>`;
}

/** The path of an instance's page under the inspector's base path (the id percent-encoded). */
export function instancePath(base: string, id: string): string {
  return `${base}/instances/${encodeURIComponent(id)}`;
}
