import { describe, expect, it } from 'vitest';
import { modelStep, type PreparedCall } from '../src/index.js';
import { scriptedModel } from './scripted-model.js';

// The model step on its own, with a context of our making: what it does when its chunks cannot be
// stored.

const call: PreparedCall = {
  transcript: [{ role: 'user', content: 'Hi' }],
  seen: ['m1'],
  fresh: true,
  opensTurn: true,
  usageTotal: { inputTokens: 0, outputTokens: 0, totalTokens: 0, modelCalls: 0 },
};

function context(flush: () => Promise<void>) {
  const written: unknown[] = [];
  const ctx = {
    input: call,
    instanceId: 'chat-1',
    iteration: 1,
    signal: new AbortController().signal,
    stream: { write: (c: unknown) => void written.push(c), flush },
  };
  return { ctx: ctx as never, written };
}

describe('the model step', () => {
  it('fails its attempt when the stream cannot store its chunks: the retry streams the response again', async () => {
    // Seen in the agent soak: an append that failed after the first batch (a pool timeout) left
    // the answer cut short in the stream for good, while the step completed with the whole text.
    const { model } = scriptedModel([{ text: 'Order 7 has shipped.' }]);
    const { ctx } = context(() => Promise.reject(new Error('connection timeout')));
    await expect(modelStep({ model, tools: {} })(ctx)).rejects.toThrow('connection timeout');
  });

  it('completes once every chunk is stored', async () => {
    const { model } = scriptedModel([{ text: 'Order 7 has shipped.' }]);
    let flushed = 0;
    const { ctx, written } = context(async () => void flushed++);
    const out = await modelStep({ model, tools: {} })(ctx);
    expect(out).toMatchObject({ status: 'answered', text: 'Order 7 has shipped.' });
    expect(flushed).toBe(1);
    expect((written.at(-1) as { type: string }).type).toBe('finish');
  });
});
