import {
  errorKind,
  HTTP_STATUS,
  isStepfoldError,
  isTerminal,
  type Store,
  type StreamStore,
} from '@stepfold/engine';
import { type AgentRunner, decideToolCall, pendingToolCalls, sendMessage } from './agent-client.js';
import type { AgentMessage, ToolApproval } from './transcript.js';
import { isTurnEnd } from './ui-chunks.js';

// The HTTP side of a chat: a fetch handler (Request in, Response out), so it mounts as it is in
// Hono (`app.all('/agents/*', (c) => route(c.req.raw))`), a Worker, or Node behind an adapter.
//
//   POST /agents/:id/messages            { id, text }       → 202 { from }: read the stream from `from`
//   GET  /agents/:id/stream?from=N                          → NDJSON stream entries from offset N, to the turn's end
//   GET  /agents/:id/tool-calls                             → the running tool calls (approvals among them)
//   POST /agents/:id/tool-calls/:toolCallId  ToolApproval   → 200 once the decision is stored

/** Options of {@link agentChatRoute}. */
export interface AgentChatRouteOptions {
  /** A runner that registers the agent's workflows (it may hand the work to workers: `execute: false`). */
  runner: AgentRunner;
  /** The store the agents run on: its `stream` is read. */
  store: Store;
  /** The agent workflow's name (`agentWorkflows({ name })`): a first message starts one. */
  agent: string;
  /** The path the routes are served under (default `/agents`). */
  basePath?: string | undefined;
  /** How often a stream being read checks that its agent still runs (ms, default 1000): a failed agent ends it. */
  checkMs?: number | undefined;
}

/** Answers the chat routes; resolves to `undefined` for a path outside them (so a caller can fall through). */
export function agentChatRoute(
  options: AgentChatRouteOptions,
): (request: Request) => Promise<Response | undefined> {
  const base = (options.basePath ?? '/agents').replace(/\/$/, '');
  const stream = options.store.stream;
  return async (request) => {
    const url = new URL(request.url);
    if (!url.pathname.startsWith(`${base}/`)) return undefined;
    const parts = url.pathname
      .slice(base.length + 1)
      .split('/')
      .map(decodeURIComponent);
    const [id, what, toolCallId] = parts;
    if (!id || !what) return undefined;
    try {
      if (what === 'messages' && parts.length === 2 && request.method === 'POST') {
        const message = (await request.json().catch(() => null)) as AgentMessage | null;
        if (typeof message?.id !== 'string' || typeof message.text !== 'string')
          return json(400, { code: 'INVALID_INPUT', message: 'a message is { id: string, text: string }' });
        // Where the answer will begin: read before the message is stored, so nothing of it is before.
        const from = stream
          ? await streamHead(stream, id, Number(url.searchParams.get('from') ?? 0) || 0)
          : 0;
        await sendMessage(options.runner, options.agent, id, message, { wait: 'write' });
        return json(202, { from });
      }
      if (what === 'stream' && parts.length === 2 && request.method === 'GET') {
        if (!stream) return json(500, { code: 'STREAM_UNSUPPORTED', message: 'the store has no stream' });
        const from = Math.max(0, Number(url.searchParams.get('from') ?? 0) || 0);
        return new Response(turnBody(options, stream, id, from, request.signal), {
          headers: { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' },
        });
      }
      if (what === 'tool-calls' && parts.length === 2 && request.method === 'GET')
        return json(200, await pendingToolCalls(options.runner, id));
      if (what === 'tool-calls' && toolCallId && parts.length === 3 && request.method === 'POST') {
        const decision = (await request.json().catch(() => null)) as ToolApproval | null;
        if (typeof decision?.decision !== 'string')
          return json(400, {
            code: 'INVALID_INPUT',
            message: 'a decision is { decision: "approve" | "edit" | "reject" }',
          });
        await decideToolCall(options.runner, id, toolCallId, decision, { wait: 'write' });
        return json(200, { ok: true });
      }
      return json(404, { code: 'NO_ROUTE', message: `no route ${request.method} ${url.pathname}` });
    } catch (e) {
      const kind = errorKind(e);
      if (!kind || !isStepfoldError(e)) throw e;
      return json(HTTP_STATUS[kind], { code: e.code, message: e.message });
    }
  };
}

/** The offset after the last entry of `id`'s stream, paging on from `from` (an offset the caller knows to be passed). */
export async function streamHead(stream: StreamStore, id: string, from = 0): Promise<number> {
  let next = from;
  for (;;) {
    const page = await stream.read(id, { from: next });
    next = page.next;
    if (page.end) return next;
  }
}

/**
 * The entries of `id`'s stream from `from`, one JSON line each, live, until a turn ends (a
 * `finish` chunk), the agent stops running (an `error` line), or the request is aborted.
 */
function turnBody(
  options: AgentChatRouteOptions,
  stream: StreamStore,
  id: string,
  from: number,
  signal: AbortSignal,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (line: unknown) => {
        if (!cancelled) controller.enqueue(encoder.encode(`${JSON.stringify(line)}\n`));
      };
      let failed: string | undefined;
      const check = setInterval(async () => {
        const s = await options.store.load(id).catch(() => undefined);
        if (s && isTerminal(s.status) && s.status !== 'completed') {
          failed = `agent ${id} ${s.status}${s.error ? `: ${s.error.message}` : ''}`;
          stop.abort();
        }
      }, options.checkMs ?? 1000);
      try {
        for await (const entry of stream.tail(id, { from, signal: stop.signal })) {
          send(entry);
          if (entry.type === 'chunk' && isTurnEnd(entry.data)) break;
        }
        if (failed) send({ type: 'error', message: failed });
      } catch (e) {
        send({ type: 'error', message: String(e) });
      } finally {
        clearInterval(check);
        signal.removeEventListener('abort', onAbort);
        if (!cancelled) controller.close();
      }
    },
    cancel() {
      cancelled = true;
      stop.abort();
    },
  });
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}
