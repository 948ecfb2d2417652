import { html, raw } from 'hono/html';
import type { View } from './format.js';

/** What every page needs to render links, forms and scripts. */
export interface PageContext {
  /** The inspector's URL prefix (its mount path), no trailing slash. */
  base: string;
  /** The CSP nonce of this response's inline script. */
  nonce: string;
  /** The CSRF token every form repeats. */
  csrf: string;
  /** Where the Mermaid browser bundle is served, when the host has the `mermaid` package. */
  mermaidUrl: string | null;
  /** Token mode with a session cookie: show a logout button. */
  canLogout: boolean;
  /** Who is signed in, when the login or the host's `authorize` named them: recorded with decisions. */
  user?: string | undefined;
}

/** A flash message shown once after an action. */
export interface Flash {
  kind: 'ok' | 'error';
  text: string;
}

// One stylesheet inline (no asset route needed); colours match the diagram's STATE_STYLES.
const CSS = raw(`
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2433;background:#f6f7f9}
header.top{background:#1d2433;color:#fff;padding:10px 20px;display:flex;gap:16px;align-items:center}
header.top a{color:#fff;text-decoration:none;font-weight:600}
header.top form{margin-left:auto}
main{padding:16px 20px;max-width:1400px}
h1{font-size:20px;margin:4px 0 12px;word-break:break-all}
h2{font-size:16px;margin:22px 0 8px;border-bottom:1px solid #d8dce3;padding-bottom:4px}
table{border-collapse:collapse;width:100%;background:#fff;border:1px solid #d8dce3}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid #eceef2;vertical-align:top}
th{background:#eef0f4;font-weight:600;font-size:13px}
td.id{font-family:ui-monospace,Menlo,Consolas,monospace;overflow-wrap:anywhere}
#instances td.id:first-child{min-width:11em}
#instances td.active-steps{min-width:9em}
#instances td.active-steps span{white-space:nowrap}
.filters input,.filters select{height:30px}
a{color:#1864ab}
pre{background:#fff;border:1px solid #d8dce3;padding:8px;overflow:auto;max-height:480px;margin:4px 0;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap;word-break:break-word}
.payload-ref{font-size:13px;border:1px solid #dee2e6;border-radius:4px;padding:4px 8px;margin:2px 0;background:#f8f9fa}
details.json summary{cursor:pointer;font:12px ui-monospace,Menlo,Consolas,monospace;color:#495057}
.muted{color:#868e96}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;border:1px solid #adb5bd;background:#f1f3f5}
.s-completed,.s-done{background:#d3f9d8;border-color:#2b8a3e;color:#1b4332}
.s-running,.s-active{background:#d0ebff;border-color:#1971c2;color:#0b2e4f}
.s-waiting{background:#fff3bf;border-color:#e67700;color:#5c3c00}
.s-failed,.s-dlq,.s-compensation-dlq,.s-aborted,.s-overdue{background:#ffe3e3;border-color:#c92a2a;color:#5c0a0a}
.s-compensating,.s-compensated,.s-cancelled{background:#f3d9fa;border-color:#862e9c;color:#3f0f4a}
.s-skipped{background:#f1f3f5;color:#868e96;border-style:dashed}
.s-none{background:#fff;color:#868e96;border-color:#dee2e6}
h1 .badge{vertical-align:middle;font-size:13px}
.overview{background:#fff;border:1px solid #d8dce3;padding:8px 10px;margin-bottom:6px}
ul.attention{list-style:none;margin:0 0 8px;padding:0}
ul.attention li{padding:3px 6px;border-left:4px solid transparent}
ul.attention li.focus{border-left-color:#1d2433;background:#f1f3f5}
ul.attention li.focus[data-state=failed]{border-left-color:#c92a2a;background:#fff5f5}
ol.strip{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:4px}
ol.strip .chip{border:1px solid #adb5bd;border-radius:3px;font:12px ui-monospace,Menlo,Consolas,monospace}
ol.strip .chip a{display:block;padding:1px 6px;color:inherit;text-decoration:none}
ol.strip .chip.focus{outline:2px solid #1d2433;outline-offset:1px}
tr.focus td{background:#f1f3f5}
tr:target td{background:#fff9db}
tr[id]{scroll-margin-top:80px}
.error-text{color:#a61e1e}
g.focus-node>*{filter:drop-shadow(0 0 5px #1d2433)}
.shapes .shape{font-size:12px;display:flex;flex-direction:column;gap:2px}
.shapes .shape[hidden]{display:none}
.shapes code.schema{background:#f1f3f5;padding:3px 5px;border-radius:3px;white-space:pre-wrap;word-break:break-word}
.refusal{background:#fff;border:1px solid #d8dce3;border-left:4px solid #862e9c;padding:10px}
.refusal h3{margin:0 0 4px;font-size:14px}.refusal p{margin:0}
p.approver{margin:0;font-size:12px}
header.top .who{margin-left:auto;font-size:13px;opacity:.85}
header.top .who+form{margin-left:0}
.flash{padding:8px 12px;border-radius:4px;margin:0 0 12px;border:1px solid}
.flash.ok{background:#d3f9d8;border-color:#2b8a3e}
.flash.error{background:#ffe3e3;border-color:#c92a2a}
.flash p.message{margin:0}.flash ul.issues{margin:6px 0 0;padding-left:18px}
.filters,.actions form{display:flex;gap:8px;flex-wrap:wrap;align-items:end;background:#fff;border:1px solid #d8dce3;padding:10px;margin-bottom:10px}
.actions{display:grid;grid-template-columns:repeat(auto-fill,minmax(320px,1fr));gap:10px}
.actions form{flex-direction:column;align-items:stretch;margin:0}
.actions h3{margin:0;font-size:14px}
label{display:flex;flex-direction:column;font-size:12px;gap:2px;color:#495057}
input,select,textarea{font:13px ui-monospace,Menlo,Consolas,monospace;padding:4px 6px;border:1px solid #adb5bd;border-radius:3px}
button{font:inherit;padding:5px 12px;border-radius:3px;border:1px solid #1864ab;background:#1971c2;color:#fff;cursor:pointer}
button.danger{background:#c92a2a;border-color:#a61e1e}
button.plain{background:#fff;color:#1d2433;border-color:#adb5bd}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:3px 14px;background:#fff;border:1px solid #d8dce3;padding:10px;margin:0}
dl.facts dt{color:#495057}dl.facts dd{margin:0;word-break:break-all}
ol.timeline{list-style:none;padding:0;margin:0;border-left:3px solid #adb5bd}
ol.timeline li{padding:3px 10px;position:relative}
ol.timeline li::before{content:"";position:absolute;left:-7px;top:9px;width:11px;height:11px;border-radius:50%;background:#adb5bd}
ol.timeline .v{font-weight:600;min-width:3em;display:inline-block}
.diagram{background:#fff;border:1px solid #d8dce3;padding:10px;overflow:auto;max-height:75vh}
.diagram pre.mermaid{max-height:none;border:0;margin:0;background:none;text-align:center}
.pager{margin-top:10px;display:flex;gap:12px}
p.parent{margin:-6px 0 12px}
#children .map{background:#fff;border:1px solid #d8dce3;padding:8px 10px;margin-top:10px}
#children .map h3{margin:0 0 6px;font-size:14px}
#children p{margin:4px 0}
#children .item{white-space:nowrap;margin-right:4px}
.bar{display:flex;height:14px;background:#f1f3f5;border:1px solid #d8dce3;border-radius:3px;overflow:hidden}
.bar span{display:block;height:100%;border:0;border-radius:0}
`);

/** The page shell: header, flash, body, and (on pages with a diagram) the Mermaid bundle. */
export function layout(
  ctx: PageContext,
  title: string,
  body: View,
  options: { flash?: Flash | null; diagram?: boolean } = {},
): View {
  const { flash, diagram } = options;
  // The instance page's script: draw the diagram and scroll its box to the focus step's node (the
  // box is bounded, so a tall workflow's failed step is in view), and show the payload shape of the
  // signal chosen in the select. Without the Mermaid bundle the page works without any script.
  const shapes = diagram
    ? html`<script nonce="${ctx.nonce}">{
const shapes = document.querySelectorAll('#signal-shapes .shape');
const pick = document.querySelector('form[data-action=signal] select[name=name]');
const showShape = () => shapes.forEach((el) => { el.hidden = pick !== null && el.dataset.signal !== pick.value; });
if (pick) { pick.addEventListener('change', showShape); showShape(); }
}</script>`
    : '';
  const script =
    diagram && ctx.mermaidUrl
      ? html`<script src="${ctx.mermaidUrl}" nonce="${ctx.nonce}"></script>
<script nonce="${ctx.nonce}">
const focusNode = () => {
  const box = document.getElementById('diagram-box');
  const id = box && box.dataset.focus;
  if (!id) return;
  // Mermaid names a node's group flowchart-<id>-<n> (maybe behind the SVG's own id) and may set data-id.
  const node = [...box.querySelectorAll('g.node')].find((n) => n.dataset.id === id || n.id.includes('flowchart-' + id + '-'));
  if (!node) return;
  node.classList.add('focus-node');
  const b = box.getBoundingClientRect(), r = node.getBoundingClientRect();
  box.scrollTop += r.top - b.top - (box.clientHeight - r.height) / 2;
  box.scrollLeft += r.left - b.left - (box.clientWidth - r.width) / 2;
};
// Labels are escaped by toMermaid; 'strict' also keeps Mermaid from running anything in them.
mermaid.initialize({ startOnLoad: false, securityLevel: 'strict' });
mermaid.run({ querySelector: 'pre.mermaid' }).then(() => { focusNode(); document.body.dataset.diagram = 'rendered'; },
  (e) => { document.body.dataset.diagram = 'failed'; console.error(e); });
</script>`
      : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<link rel="icon" href="data:,">
<title>${title} · stepfold inspector</title>
<style>${CSS}</style>
</head>
<body>
<header class="top">
<a href="${ctx.base || '/'}">stepfold inspector</a>
<a href="${ctx.base}/schedules" id="nav-schedules">Schedules</a>
${ctx.user ? html`<span class="who" id="who">signed in as ${ctx.user}</span>` : ''}
${
  ctx.canLogout
    ? html`<form method="post" action="${ctx.base}/logout"><input type="hidden" name="_csrf" value="${ctx.csrf}"><button class="plain" type="submit">Log out</button></form>`
    : ''
}
</header>
<main>
${flash ? html`<p class="flash ${flash.kind}" role="status">${flash.text}</p>` : ''}
${body}
</main>
${shapes}
${script}
</body>
</html>`;
}

/** A page with only a message (and, for a validation error, its issues one per line): errors, conflicts, refusals. */
export function messagePage(
  ctx: PageContext,
  title: string,
  message: string,
  back?: string,
  issues: readonly { path: string; message: string }[] = [],
): View {
  return layout(
    ctx,
    title,
    html`<h1>${title}</h1>
<div class="flash error" role="alert"><p class="message">${message}</p>${
      issues.length
        ? html`<ul class="issues" id="issues">${issues.map(
            (i) => html`<li><code>${i.path || '(root)'}</code> ${i.message}</li>`,
          )}</ul>`
        : ''
    }</div>
${back ? html`<p><a href="${back}">Back</a></p>` : ''}`,
  );
}
