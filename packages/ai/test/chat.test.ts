import { composition, createMemoryStore, createRunner } from '@stepfold/engine';
import type { UIMessage, UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import {
  agentChatRoute,
  agentHandlers,
  agentWorkflows,
  type ChatOffset,
  type ChatOffsets,
  StepfoldChatTransport,
} from '../src/index.js';
import { type ScriptedResponse, scriptedModel } from './scripted-model.js';

// The chat route and the AI SDK UI transport together, the route called in process (a fetch that
// hands the Request to it), the runner answering in the background as a server's would.

function chatServer(script: ScriptedResponse[]) {
  const store = createMemoryStore();
  const { agent, tool } = agentWorkflows({ name: 'support' });
  const scripted = scriptedModel(script);
  const runner = createRunner({
    store,
    workflows: [agent, tool],
    kinds: [composition],
    handlers: agentHandlers({ name: 'support', model: scripted.model, tools: {}, store }),
  });
  const route = agentChatRoute({ runner, store, agent: 'support', checkMs: 50 });
  const fetchRoute: typeof fetch = async (input, init) => {
    const response = await route(new Request(new URL(String(input), 'http://chat.test'), init));
    return response ?? new Response('not found', { status: 404 });
  };
  return { store, runner, fetchRoute };
}

function sharedOffsets(): ChatOffsets & { map: Map<string, ChatOffset> } {
  const map = new Map<string, ChatOffset>();
  return { map, get: (id) => map.get(id), set: (id, o) => void map.set(id, o) };
}

const userMessage = (id: string, text: string): UIMessage => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text }],
});

async function readAll(stream: ReadableStream<UIMessageChunk>, stopAfter = Number.POSITIVE_INFINITY) {
  const out: UIMessageChunk[] = [];
  const reader = stream.getReader();
  while (out.length < stopAfter) {
    const { value, done } = await reader.read();
    if (done) break;
    out.push(value);
  }
  await reader.cancel();
  return out;
}

const textOf = (chunks: UIMessageChunk[]) =>
  chunks.flatMap((c) => (c.type === 'text-delta' ? [c.delta] : [])).join('');

describe('chat transport over the agent chat route', () => {
  it('sends a message and streams the answer to the end of the turn', async () => {
    const server = chatServer([{ text: 'Hello there, how can I help?' }]);
    const transport = new StepfoldChatTransport({ api: '/agents', fetch: server.fetchRoute });
    const stream = await transport.sendMessages({
      trigger: 'submit-message',
      chatId: 'chat-1',
      messageId: undefined,
      messages: [userMessage('m1', 'Hi')],
      abortSignal: undefined,
    });
    const chunks = await readAll(stream);
    expect(chunks[0]?.type).toBe('start');
    expect(textOf(chunks)).toBe('Hello there, how can I help?');
    expect(chunks.at(-1)?.type).toBe('finish');
    // The turn is over: nothing to reconnect to.
    expect(await transport.reconnectToStream({ chatId: 'chat-1' })).toBeNull();
  });

  it('resumes a turn after a reload: a new transport reads it again from the offset where it began', async () => {
    const server = chatServer([
      { text: 'Hello there, how can I help?' },
      { text: 'Order seven left the warehouse this morning and should arrive tomorrow.', delayMs: 15 },
    ]);
    const offsets = sharedOffsets();
    const before = new StepfoldChatTransport({ fetch: server.fetchRoute, offsets });
    await readAll(
      await before.sendMessages({
        trigger: 'submit-message',
        chatId: 'chat-2',
        messageId: undefined,
        messages: [userMessage('m1', 'Hi')],
        abortSignal: undefined,
      }),
    );
    const second = await before.sendMessages({
      trigger: 'submit-message',
      chatId: 'chat-2',
      messageId: undefined,
      messages: [userMessage('m2', 'Where is order 7?')],
      abortSignal: undefined,
    });
    const seen = await readAll(second, 4); // the page reloads four chunks into the answer
    expect(seen[0]?.type).toBe('start');
    const turnStart = offsets.map.get('chat-2')?.turn;
    expect(turnStart).toBeGreaterThan(0);

    const after = new StepfoldChatTransport({ fetch: server.fetchRoute, offsets });
    const resumed = await after.reconnectToStream({ chatId: 'chat-2' });
    expect(resumed).not.toBeNull();
    const chunks = await readAll(resumed!);
    // The whole second answer, from its start, and nothing of the first.
    expect(chunks[0]?.type).toBe('start');
    expect(textOf(chunks)).toBe('Order seven left the warehouse this morning and should arrive tomorrow.');
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(offsets.map.get('chat-2')?.turn).toBeUndefined();
  });

  it('answers the route errors with the engine error codes', async () => {
    const server = chatServer([]);
    const bad = await server.fetchRoute('/agents/chat-3/messages', { method: 'POST', body: '{"text":1}' });
    expect(bad.status).toBe(400);
    const missing = await server.fetchRoute('/agents/chat-3/tool-calls/nope', {
      method: 'POST',
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'NOT_FOUND' });
  });
});
