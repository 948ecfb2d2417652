import {
  composition,
  createMemoryPayloadStore,
  createMemoryStore,
  createRunner,
  isPayloadRef,
  offloading,
  type Snapshot,
  type Store,
  type StreamEntry,
  tokenUsage,
} from '@stepfold/engine';
import { tool } from 'ai';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  type AgentInput,
  agentHandlers,
  agentWorkflows,
  decideToolCall,
  type ModelTurn,
  pendingToolCalls,
  sendMessage,
} from '../src/index.js';
import { type ScriptedResponse, scriptedModel } from './scripted-model.js';

// The agent on a runner over the memory store: streamed chunks in `store.stream`, approvals sent
// to the running tool call, the transcript offloaded so the snapshot stays small.

function agentOnRunner(script: ScriptedResponse[], turnsPerRun = 20, wrap = (s: Store) => s) {
  const store = wrap(createMemoryStore());
  const payloadStore = createMemoryPayloadStore();
  const { agent, tool: toolCall } = agentWorkflows({ name: 'support', turnsPerRun });
  const runs: string[] = [];
  const tools = {
    lookupOrder: tool({
      description: 'Finds an order by id',
      inputSchema: z.object({ id: z.string() }),
      execute: async ({ id }) => {
        runs.push(`lookupOrder ${id}`);
        return { id, status: 'shipped', notes: 'x'.repeat(300) };
      },
    }),
    cancelOrder: tool({
      description: 'Cancels an order',
      inputSchema: z.object({ id: z.string() }),
      needsApproval: true,
      execute: async ({ id }) => {
        runs.push(`cancelOrder ${id}`);
        return { cancelled: id };
      },
    }),
  };
  const scripted = scriptedModel(script);
  const runner = createRunner({
    store,
    workflows: [agent, toolCall],
    kinds: [composition],
    payloads: offloading({ store: payloadStore, threshold: 512 }),
    handlers: agentHandlers({ name: 'support', model: scripted.model, tools, store }),
  });
  return { store, runner, runs, scripted };
}

const turnOf = (s: Snapshot | null | undefined) => s?.steps['model']?.output as ModelTurn | undefined;

const chunkTypes = (entries: StreamEntry[]) =>
  entries.flatMap((e) => (e.type === 'chunk' ? [(e.data as { type: string }).type] : []));

describe('an agent on a runner', () => {
  it('streams the turn to store.stream: start, text, tool input and output, finish', async () => {
    const t = agentOnRunner([
      { text: 'Checking. ', toolCalls: [{ id: 'c1', name: 'lookupOrder', input: { id: '7' } }] },
      { text: 'It shipped.' },
    ]);
    await sendMessage(t.runner, 'support', 'chat-1', { id: 'm1', text: 'Where is order 7?' });
    const s = await t.runner.get('chat-1');
    expect(turnOf(s)?.status).toBe('answered');
    const { entries } = await t.store.stream!.read('chat-1');
    const types = chunkTypes(entries);
    expect(types[0]).toBe('start');
    expect(types).toEqual(
      expect.arrayContaining(['text-delta', 'tool-input-available', 'tool-output-available']),
    );
    expect(types.indexOf('tool-output-available')).toBeGreaterThan(types.indexOf('tool-input-available'));
    expect(types.at(-1)).toBe('finish');
    expect(t.runs).toEqual(['lookupOrder 7']);
  });

  it('retries a model call that failed after the tools settled without running a tool again', async () => {
    const t = agentOnRunner([
      { toolCalls: [{ id: 'c1', name: 'lookupOrder', input: { id: '7' } }] },
      { fail: 'connection reset by the provider' },
      { text: 'It shipped.' },
    ]);
    await sendMessage(t.runner, 'support', 'chat-4', { id: 'm1', text: 'Where is order 7?' });
    let s = await t.runner.get('chat-4');
    for (
      let i = 0;
      i < 100 && (s?.steps['model']?.output as ModelTurn | undefined)?.status !== 'answered';
      i++
    ) {
      await new Promise((r) => setTimeout(r, 20));
      await t.runner.processDue(Date.now() + 60_000);
      await t.runner.idle();
      s = await t.runner.get('chat-4');
    }
    expect(turnOf(s)?.text).toBe('It shipped.');
    expect(s?.steps['model']?.attempt).toBe(2);
    expect(t.runs).toEqual(['lookupOrder 7']);
    expect(t.scripted.count()).toBe(3);
  });

  it('sends an approval to the tool call that waits for it, by tool-call id', async () => {
    const t = agentOnRunner([
      { toolCalls: [{ id: 'x1', name: 'cancelOrder', input: { id: '9' } }] },
      { text: 'Cancelled.' },
    ]);
    await sendMessage(t.runner, 'support', 'chat-2', { id: 'm1', text: 'Cancel order 9' });
    const pending = await pendingToolCalls(t.runner, 'chat-2');
    expect(pending).toMatchObject([{ toolCallId: 'x1', toolName: 'cancelOrder', approval: true }]);
    expect(t.runs).toEqual([]);
    await decideToolCall(t.runner, 'chat-2', 'x1', { decision: 'approve' });
    await t.runner.idle();
    expect(t.runs).toEqual(['cancelOrder 9']);
    expect(await pendingToolCalls(t.runner, 'chat-2')).toEqual([]);
    const s = await t.runner.get('chat-2');
    expect(turnOf(s)?.text).toBe('Cancelled.');
    await expect(decideToolCall(t.runner, 'chat-2', 'x1', { decision: 'approve' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it("waits for a pending call's child instance to be created before it sends the decision", async () => {
    // The call is listed pending from the write that dispatches it; its child is created after
    // that write (or by the worker that takes the call over after a crash): held back here.
    let open!: () => void;
    const held = new Promise<void>((r) => {
      open = r;
    });
    const t = agentOnRunner(
      [{ toolCalls: [{ id: 'x2', name: 'cancelOrder', input: { id: '5' } }] }, { text: 'Done.' }],
      20,
      (inner) =>
        Object.assign(Object.create(inner) as Store, {
          create: async (s: Snapshot, o?: Parameters<Store['create']>[1]) => {
            if (s.parent) await held;
            return inner.create(s, o);
          },
        }),
    );
    await sendMessage(t.runner, 'support', 'chat-5', { id: 'm1', text: 'Cancel order 5' }, { wait: 'write' });
    await vi.waitFor(async () => expect(await pendingToolCalls(t.runner, 'chat-5')).toHaveLength(1));
    const [call] = await pendingToolCalls(t.runner, 'chat-5');
    expect(await t.store.load(call!.child)).toBeNull();
    let decided = false;
    const deciding = decideToolCall(t.runner, 'chat-5', 'x2', { decision: 'approve' }).then((s) => {
      decided = true;
      return s;
    });
    await new Promise((r) => setTimeout(r, 100));
    expect(decided).toBe(false);
    open();
    expect((await deciding).id).toBe(call!.child);
    await t.runner.idle();
    expect(t.runs).toEqual(['cancelOrder 5']);
    await vi.waitFor(async () => expect(turnOf(await t.runner.get('chat-5'))?.text).toBe('Done.'));
  });

  it('keeps the snapshot small over many turns: the transcript is offloaded, the run continues as new', async () => {
    const script: ScriptedResponse[] = [];
    for (let i = 0; i < 6; i++)
      script.push(
        { toolCalls: [{ id: `c${i}`, name: 'lookupOrder', input: { id: String(i) } }] },
        { text: `Order ${i} shipped.` },
      );
    const t = agentOnRunner(script, 4);
    const sizes: number[] = [];
    for (let i = 0; i < 6; i++) {
      await sendMessage(t.runner, 'support', 'chat-3', {
        id: `m${i}`,
        text: `Where is order ${i}? ${'please '.repeat(20)}`,
      });
      sizes.push(JSON.stringify(await t.store.load('chat-3')).length);
    }
    const s = await t.runner.get('chat-3');
    // Right after a rotation the new run has made no model call yet: its input carries the last turn.
    const last = turnOf(s) ?? (s?.input as AgentInput | undefined)?.last;
    // The whole conversation is still there for the model: 6 questions, 6 tool rounds, 6 answers.
    expect(last?.transcript.filter((m) => m.role === 'user')).toHaveLength(6);
    expect(s?.run).toBeGreaterThan(1);
    // Stored, the last turn is a reference to a payload, not the transcript itself.
    const stored = await t.store.load('chat-3');
    expect(isPayloadRef((stored?.input as { last?: unknown } | undefined)?.last)).toBe(true);
    // The stored snapshot does not grow with the conversation.
    expect(Math.max(...sizes)).toBeLessThan(12_000);
    expect(sizes.at(-1)!).toBeLessThan(sizes[1]! * 1.5);
    // The conversation's tokens, read from the stored snapshot (kept inline beside the references):
    // 12 model calls of 10 input tokens, 6 answers of 3 words.
    expect(tokenUsage(stored!)).toEqual({
      inputTokens: 120,
      outputTokens: 18,
      totalTokens: 138,
      modelCalls: 12,
    });
  });
});
