import { composition, createHarness, type Handler, tokenUsage } from '@stepfold/engine';
import { tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentHandlers, agentWorkflows, type ModelTurn, type ToolApproval } from '../src/index.js';
import { promptLines, type ScriptedResponse, scriptedModel } from './scripted-model.js';

// The agent loop in the harness: pure, the fake clock, the AI SDK's mock model with scripted
// responses. Nothing here touches a network or a store.

const SYSTEM = 'You help with orders.';

function agentUnderTest(script: ScriptedResponse[], options: { turnsPerRun?: number } = {}) {
  const { agent, tool: toolCall } = agentWorkflows({ name: 'support', ...options });
  const executed: string[] = [];
  const tools = {
    lookupOrder: tool({
      description: 'Finds an order by id',
      inputSchema: z.object({ id: z.string() }),
      execute: async ({ id }) => {
        executed.push(`lookupOrder ${id}`);
        return { id, status: 'shipped' };
      },
    }),
    refund: tool({
      description: 'Refunds an order',
      inputSchema: z.object({ id: z.string(), cents: z.number() }),
      needsApproval: true,
      execute: async ({ id, cents }) => {
        executed.push(`refund ${id} ${cents}`);
        return { refunded: cents };
      },
    }),
  };
  const scripted = scriptedModel(script);
  const handlers = agentHandlers({ name: 'support', model: scripted.model, tools, system: SYSTEM });
  const h = createHarness(agent, { workflows: [toolCall], kinds: [composition] });
  const prompt = (i: number) => promptLines(scripted.calls()[i]!.prompt as never);
  return { h, handlers, executed, scripted, prompt };
}

const turn = (h: { snapshot: { steps: Record<string, { output?: unknown } | undefined> } }) =>
  h.snapshot.steps['model']?.output as ModelTurn;

describe('the agent loop as workflow data (harness, scripted model)', () => {
  it('runs a two-tool turn: both calls as tasks, their results in the next model call, then the answer', async () => {
    const t = agentUnderTest([
      {
        text: 'Let me look. ',
        toolCalls: [
          { id: 'c1', name: 'lookupOrder', input: { id: '7' } },
          { id: 'c2', name: 'lookupOrder', input: { id: '8' } },
        ],
      },
      { text: 'Both orders have shipped.' },
    ]);
    t.h.start({ messages: [{ id: 'm1', text: 'Where are orders 7 and 8?' }] });
    await t.h.run(t.handlers, { timers: 'until-signal' });

    expect(t.executed).toEqual(['lookupOrder 7', 'lookupOrder 8']);
    expect(turn(t.h)).toMatchObject({ status: 'answered', text: 'Both orders have shipped.', toolCalls: [] });
    expect(t.prompt(1)).toEqual([
      `system: ${SYSTEM}`,
      'user: Where are orders 7 and 8?',
      'assistant: Let me look.  | call lookupOrder({"id":"7"}) | call lookupOrder({"id":"8"})',
      'tool: result lookupOrder {"type":"json","value":{"id":"7","status":"shipped"}} | result lookupOrder {"type":"json","value":{"id":"8","status":"shipped"}}',
    ]);
    // The turn is over: the agent waits for the next message.
    expect(t.h.awaitingSignal().map((a) => a.signal)).toEqual(['message']);
    // The model step streamed UI chunks: the turn's start, the text, and its end.
    const types = t.h.streamed.map((c) => (c.data as { type: string }).type);
    expect(types[0]).toBe('start');
    expect(types).toContain('text-delta');
    expect(types.at(-1)).toBe('finish');
    expect(t.h.child('tools', 0).streamed.map((c) => (c.data as { type: string }).type)).toEqual([
      'tool-output-available',
    ]);
  });

  it.each<[string, ToolApproval, string[], string]>([
    ['approved', { decision: 'approve' }, ['refund 7 1200'], '{"type":"json","value":{"refunded":1200}}'],
    [
      'approved with edited arguments',
      { decision: 'edit', input: { id: '7', cents: 500 } },
      ['refund 7 500'],
      '{"type":"json","value":{"editedInput":{"id":"7","cents":500},"output":{"refunded":500}}}',
    ],
    [
      'rejected with a message',
      { decision: 'reject', message: 'refunds over $10 need a manager' },
      [],
      '{"type":"error-text","value":"the user rejected this tool call: refunds over $10 need a manager"}',
    ],
  ])('gates a tool behind approval: %s', async (_, decision, executed, result) => {
    const t = agentUnderTest([
      { toolCalls: [{ id: 'r1', name: 'refund', input: { id: '7', cents: 1200 } }] },
      { text: 'Done.' },
    ]);
    t.h.start({ messages: [{ id: 'm1', text: 'Refund order 7' }] });
    await t.h.run(t.handlers, { timers: 'until-signal' });
    const call = t.h.child('tools', 0);
    expect(call.awaitingSignal().map((a) => a.signal)).toEqual(['approval']);
    expect(t.executed).toEqual([]);
    expect(t.h.streamed.map((c) => c.data)).toContainEqual({
      type: 'tool-approval-request',
      approvalId: 'r1',
      toolCallId: 'r1',
    });

    call.signal('approval', decision);
    await t.h.run(t.handlers, { timers: 'until-signal' });
    expect(t.executed).toEqual(executed);
    expect(t.prompt(1).at(-1)).toBe(`tool: result refund ${result}`);
    expect(turn(t.h).status).toBe('answered');
  });

  it('hands a message sent mid-turn to the next model call, with the tool results', async () => {
    const t = agentUnderTest([
      { toolCalls: [{ id: 'r1', name: 'refund', input: { id: '7', cents: 1200 } }] },
      { text: 'Refunded, and I noted the address.' },
    ]);
    t.h.start({ messages: [{ id: 'm1', text: 'Refund order 7' }] });
    await t.h.run(t.handlers, { timers: 'until-signal' });
    // The refund waits for approval: the user writes again meanwhile.
    t.h.signal('message', { id: 'm2', text: 'Also: my address changed.' });
    t.h.child('tools', 0).signal('approval', { decision: 'approve' });
    await t.h.run(t.handlers, { timers: 'until-signal' });

    expect(t.prompt(1).slice(-2)).toEqual([
      'tool: result refund {"type":"json","value":{"refunded":1200}}',
      'user: Also: my address changed.',
    ]);
    // Taken in once: no third model call for it.
    expect(t.scripted.count()).toBe(2);
    expect(t.h.awaitingSignal().map((a) => a.signal)).toEqual(['message']);
  });

  it('never runs a settled tool call again when the runner dies before the next model call', async () => {
    const t = agentUnderTest([
      { toolCalls: [{ id: 'c1', name: 'lookupOrder', input: { id: '7' } }] },
      { text: 'It shipped.' },
    ]);
    const prepare = t.handlers['support.prepare'] as Handler;
    const model = t.handlers['support.model'] as Handler;
    const callTool = t.handlers['support.tool'] as Handler;
    t.h.start({ messages: [{ id: 'm1', text: 'Where is order 7?' }] });
    await t.h.run({ 'support.prepare': prepare, 'support.model': model }); // the first model call
    // The tool settles; the next transcript is prepared and the second model call dispatched.
    await t.h.run({ 'support.tool': callTool, 'support.prepare': prepare });
    expect(t.executed).toEqual(['lookupOrder 7']);
    expect(t.h.dispatched('model')).toHaveLength(1);

    // Its runner dies: the lease lapses, and the model step is retried elsewhere.
    t.h.advance(11_000, { renew: false });
    expect(t.h.dispatched('model')[0]?.attempt).toBe(2);
    await t.h.run(t.handlers, { timers: 'until-signal' });

    expect(t.executed).toEqual(['lookupOrder 7']);
    expect(turn(t.h)).toMatchObject({ status: 'answered', text: 'It shipped.' });
    expect(t.prompt(1).filter((l) => l.startsWith('tool:'))).toHaveLength(1);
  });

  it('continues as new every N turns, carrying the transcript', async () => {
    const t = agentUnderTest(
      [{ text: 'Hello!' }, { text: 'Order 7 shipped.' }, { text: 'You are welcome.' }],
      {
        turnsPerRun: 2,
      },
    );
    t.h.start({ messages: [{ id: 'm1', text: 'Hi' }] });
    await t.h.run(t.handlers, { timers: 'until-signal' });
    t.h.signal('message', { id: 'm2', text: 'Where is order 7?' });
    await t.h.run(t.handlers, { timers: 'until-signal' });
    // Two model calls in this run: it continued as new, and waits for a message in the new run.
    expect(t.h.snapshot.run).toBe(2);
    expect(t.h.awaitingSignal().map((a) => a.signal)).toEqual(['message']);

    t.h.signal('message', { id: 'm3', text: 'Thanks' });
    await t.h.run(t.handlers, { timers: 'until-signal' });
    expect(t.prompt(2)).toEqual([
      `system: ${SYSTEM}`,
      'user: Hi',
      'assistant: Hello!',
      'user: Where is order 7?',
      'assistant: Order 7 shipped.',
      'user: Thanks',
    ]);
    expect(turn(t.h)).toMatchObject({ status: 'answered', turn: 1 });
  });

  it('adds up the tokens of every completed model call, across continue-as-new', async () => {
    // The scripted model reports 10 input tokens a call and one output token a word.
    const t = agentUnderTest(
      [
        { text: 'Let me look. ', toolCalls: [{ id: 'c1', name: 'lookupOrder', input: { id: '7' } }] },
        { fail: 'overloaded' }, // a failed attempt: no usage reaches the step's output
        { text: 'Order 7 shipped.' },
        { text: 'You are welcome.' },
      ],
      { turnsPerRun: 2 },
    );
    t.h.start({ messages: [{ id: 'm1', text: 'Where is order 7?' }] });
    await t.h.run(t.handlers, { timers: 'until-signal' });
    // Two model calls (3 words each) then the rotation: the total rides in the new run's input.
    expect(t.h.snapshot.run).toBe(2);
    expect(tokenUsage(t.h.snapshot)).toEqual({
      inputTokens: 20,
      outputTokens: 6,
      totalTokens: 26,
      modelCalls: 2,
    });
    t.h.signal('message', { id: 'm2', text: 'Thanks' });
    await t.h.run(t.handlers, { timers: 'until-signal' });
    const last = turn(t.h);
    expect(last.usage).toEqual({ inputTokens: 10, outputTokens: 3, totalTokens: 13 });
    expect(last.usageTotal).toEqual({ inputTokens: 30, outputTokens: 9, totalTokens: 39, modelCalls: 3 });
    expect(tokenUsage(t.h.snapshot)).toEqual(last.usageTotal);
  });
});
