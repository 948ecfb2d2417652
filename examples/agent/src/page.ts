// The chat page: plain HTML and one module script, no build step. It talks to the agent through
// @stepfold/ai's `StepfoldChatTransport` (served from the package's build at /assets/), the same
// transport `useChat` takes, with its offsets in sessionStorage: a page reloaded mid-answer reads
// the turn in progress again from where it began, and finished turns are kept in sessionStorage
// too. A tool call that waits for approval shows Approve and Reject buttons.

const STYLE = `
  body { font: 15px/1.45 system-ui, sans-serif; margin: 0; background: #f6f7f9; color: #1d2330; }
  main { max-width: 44rem; margin: 2rem auto; padding: 0 1rem; }
  #log { display: flex; flex-direction: column; gap: .6rem; margin-bottom: 1rem; }
  .user, .assistant { padding: .6rem .8rem; border-radius: .6rem; max-width: 85%; }
  .user { align-self: flex-end; background: #2f5bd3; color: #fff; }
  .assistant { align-self: flex-start; background: #fff; border: 1px solid #d9dde5; }
  .tool { margin-top: .5rem; padding: .4rem .6rem; border-radius: .4rem; background: #f0f2f6; font-size: 13px; }
  .tool code { font-size: 12px; }
  .tool button { margin: .3rem .4rem 0 0; }
  form { display: flex; gap: .5rem; }
  input { flex: 1; padding: .5rem; font: inherit; }
  #status { color: #667; min-height: 1.4em; }
`;

const SCRIPT = `
import { StepfoldChatTransport, storageOffsets } from '/assets/chat-transport.js';

const params = new URLSearchParams(location.search);
const chatId = params.get('chat') ?? sessionStorage.getItem('chat-id') ?? 'chat-' + crypto.randomUUID().slice(0, 8);
sessionStorage.setItem('chat-id', chatId);
const transport = new StepfoldChatTransport({ api: '/agents', offsets: storageOffsets(sessionStorage) });
const log = document.getElementById('log');
const status = document.getElementById('status');
const historyKey = 'stepfold-example-history:' + chatId;
const history = JSON.parse(sessionStorage.getItem(historyKey) ?? '[]');
const save = () => sessionStorage.setItem(historyKey, JSON.stringify(history));

function bubble(role) {
  const el = document.createElement('div');
  el.className = role;
  log.append(el);
  return el;
}

function toolCard(el, id, name) {
  let card = el.querySelector('.tool[data-tool-call-id="' + CSS.escape(id) + '"]');
  if (!card) {
    card = document.createElement('div');
    card.className = 'tool';
    card.dataset.toolCallId = id;
    card.innerHTML = '<b class="name"></b> <code class="input"></code> <span class="state"></span> <div class="actions"></div>';
    el.append(card);
  }
  if (name) card.querySelector('.name').textContent = name;
  return card;
}

async function decide(id, decision, card) {
  for (const b of card.querySelectorAll('button')) b.disabled = true;
  const body = decision === 'approve' ? { decision } : { decision, message: 'a person declined it in the chat' };
  const res = await fetch('/agents/' + encodeURIComponent(chatId) + '/tool-calls/' + encodeURIComponent(id), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  card.querySelector('.state').textContent = res.ok ? 'decided: ' + decision : 'not decided: ' + (await res.text());
}

/** Shows one UI message chunk in the assistant's bubble. */
function render(el, chunk) {
  if (chunk.type === 'text-start' || chunk.type === 'text-delta') {
    let span = el.querySelector('[data-text="' + CSS.escape(chunk.id) + '"]');
    if (!span) {
      span = document.createElement('span');
      span.dataset.text = chunk.id;
      el.append(span);
    }
    if (chunk.type === 'text-delta') span.textContent += chunk.delta;
  } else if (chunk.type === 'tool-input-available') {
    const card = toolCard(el, chunk.toolCallId, chunk.toolName);
    card.querySelector('.input').textContent = JSON.stringify(chunk.input);
    card.querySelector('.state').textContent = 'running';
  } else if (chunk.type === 'tool-approval-request') {
    const card = toolCard(el, chunk.toolCallId);
    card.querySelector('.state').textContent = 'waiting for approval';
    const actions = card.querySelector('.actions');
    actions.replaceChildren();
    for (const decision of ['approve', 'reject']) {
      const b = document.createElement('button');
      b.textContent = decision === 'approve' ? 'Approve' : 'Reject';
      b.dataset.decision = decision;
      b.onclick = () => decide(chunk.toolCallId, decision, card);
      actions.append(b);
    }
  } else if (chunk.type === 'tool-output-available' || chunk.type === 'tool-output-denied') {
    const card = toolCard(el, chunk.toolCallId);
    card.querySelector('.actions').replaceChildren();
    card.querySelector('.state').textContent =
      chunk.type === 'tool-output-denied' ? 'rejected' : 'done: ' + JSON.stringify(chunk.output);
  } else if (chunk.type === 'error') {
    status.textContent = 'error: ' + chunk.errorText;
  }
}

/** Reads an answer to its end into a new bubble, then keeps the bubble in the history. */
async function show(stream) {
  status.textContent = 'answering…';
  const el = bubble('assistant');
  const reader = stream.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    render(el, value);
  }
  for (const b of el.querySelectorAll('button')) b.remove();
  history.push({ role: 'assistant', html: el.innerHTML });
  save();
  if (status.textContent === 'answering…') status.textContent = '';
}

for (const h of history) {
  const el = bubble(h.role);
  if (h.role === 'user') el.textContent = h.text;
  else el.innerHTML = h.html;
}

document.getElementById('ask').addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = document.getElementById('text');
  const text = input.value.trim();
  if (!text) return;
  input.value = '';
  bubble('user').textContent = text;
  history.push({ role: 'user', text });
  save();
  const message = { id: 'msg-' + crypto.randomUUID(), role: 'user', parts: [{ type: 'text', text }] };
  try {
    await show(await transport.sendMessages({ chatId, messages: [message], trigger: 'submit-message' }));
  } catch (e) {
    status.textContent = 'error: ' + e.message;
  }
});

document.body.dataset.ready = 'true';
// A turn still in progress (this page was reloaded mid-answer): read it again from where it began.
const resumed = await transport.reconnectToStream({ chatId });
if (resumed) await show(resumed);
`;

/** The chat page's HTML. */
export function chatPage(): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Support agent · stepfold</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>Support</h1>
<div id="log" aria-live="polite"></div>
<form id="ask"><input id="text" autocomplete="off" placeholder="Refund order 7, please." required><button>Send</button></form>
<p id="status"></p>
</main>
<script type="module">${SCRIPT}</script>
</body>
</html>`;
}
