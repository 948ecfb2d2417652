import { isPayloadRef, type PayloadRef, payloadRefs } from '@stepfold/engine';
import { html } from 'hono/html';
import { instancePath, json, type View } from './format.js';
import { layout, type PageContext } from './layout.js';

// Offloaded values on the instance page: a reference shows as a small block (size, hash prefix,
// kept fields) with a link to its value, which the payload route fetches only when asked.

/** Characters of pretty JSON a value page shows before it cuts the rest (and offers the download). */
export const SHOWN_CHARS = 256 * 1024;

/** A size for people, in decimal units, as the reference counts UTF-8 bytes. */
export function humanBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const [n, unit] =
    bytes < 1e6 ? [bytes / 1e3, 'kB'] : bytes < 1e9 ? [bytes / 1e6, 'MB'] : [bytes / 1e9, 'GB'];
  return `${n >= 100 ? Math.round(n) : n.toFixed(1)} ${unit}`;
}

/** The path of a payload's value page (`?download=1` for the body as a file). */
export function payloadPath(base: string, id: string, sha256: string): string {
  return `${instancePath(base, id)}/payloads/${encodeURIComponent(sha256)}`;
}

/** One reference as a block: what it holds, and how to see it (or why one cannot here). */
export function refBlock(ctx: PageContext, id: string, ref: PayloadRef, o: { configured: boolean }): View {
  const keep = ref.keep && Object.keys(ref.keep).length ? ref.keep : undefined;
  return html`<div class="payload-ref" data-sha="${ref.sha256}"><strong>payload</strong> ${humanBytes(ref.bytes)} · sha <code title="${ref.sha256}">${ref.sha256.slice(0, 12)}…</code>${
    keep ? html` · kept: <code>${JSON.stringify(keep)}</code>` : ''
  } · ${
    o.configured
      ? html`<a class="show-payload" href="${payloadPath(ctx.base, id, ref.sha256)}">show value</a>`
      : html`<span class="muted">payloads are not configured in this inspector (its <code>payloads</code> option)</span>`
  }</div>`;
}

/**
 * A value of instance `id`: `plain(value)` when it holds no reference; a reference as its block;
 * a value with references inside as `plain(value)` followed by a block for each. `configured`: the
 * inspector has a payload store to show the values from.
 */
export function valueView(
  ctx: PageContext,
  id: string,
  value: unknown,
  o: { configured: boolean; plain?: ((value: unknown) => View) | undefined },
): View {
  const plain = o.plain ?? json;
  if (isPayloadRef(value)) return refBlock(ctx, id, value, o);
  const refs = payloadRefs(value);
  if (!refs.length) return plain(value);
  return html`${plain(value)}${refs.map((r) => refBlock(ctx, id, r, o))}`;
}

/** What the value page shows: the reference, the body's pretty JSON (cut at {@link SHOWN_CHARS}). */
export interface PayloadView {
  id: string;
  ref: PayloadRef;
  body: string;
}

/** The value page of one payload: escaped pretty JSON, cut with a download link when very large. */
export function payloadPage(ctx: PageContext, v: PayloadView): View {
  let pretty: string;
  try {
    pretty = JSON.stringify(JSON.parse(v.body), null, 2);
  } catch {
    pretty = v.body; // hash-checked, so it is what was stored; show it as it is
  }
  const cut = pretty.length > SHOWN_CHARS;
  const download = `${payloadPath(ctx.base, v.id, v.ref.sha256)}?download=1`;
  const body = html`<p><a href="${instancePath(ctx.base, v.id)}">← ${v.id}</a></p>
<h1>Payload <code>${v.ref.sha256.slice(0, 12)}…</code></h1>
<dl class="facts" id="payload-facts">
<dt>instance</dt><dd>${v.id}</dd>
<dt>size</dt><dd>${humanBytes(v.ref.bytes)} <span class="muted">(${String(v.ref.bytes)} bytes of JSON)</span></dd>
<dt>sha256</dt><dd><code>${v.ref.sha256}</code></dd>
${v.ref.keep ? html`<dt>kept</dt><dd><code>${JSON.stringify(v.ref.keep)}</code></dd>` : ''}
</dl>
${
  cut
    ? html`<p class="flash error" id="truncated">Too large to show whole: the first ${humanBytes(SHOWN_CHARS)} of ${humanBytes(pretty.length)} of pretty JSON below. <a href="${download}">Download the value</a>.</p>`
    : html`<p><a href="${download}">Download</a></p>`
}
<pre class="json" id="payload-value">${cut ? `${pretty.slice(0, SHOWN_CHARS)}\n…` : pretty}</pre>`;
  return layout(ctx, `${v.id} payload ${v.ref.sha256.slice(0, 12)}`, body);
}
