import { createMemoryStore, makeTestSnapshot } from '@stepfold/engine';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createInspector } from '../src/index.js';

// The instance page shows the model tokens an instance counted (a step output's `usageTotal`: the
// agent loop of @stepfold/ai keeps one), among the instance's facts.

const TOKEN = 'tokens-page-token-0123';

describe('the instance page: tokens', () => {
  it('lists the total among the facts, and nothing for an instance that counts none', async () => {
    const store = createMemoryStore();
    const usageTotal = { inputTokens: 1200, outputTokens: 345, totalTokens: 1545, modelCalls: 7 };
    await store.create(
      makeTestSnapshot('chat-1', {
        steps: {
          model: {
            status: 'completed',
            iteration: 1,
            attempt: 1,
            startedAt: 0,
            output: { status: 'answered', usageTotal },
          },
        },
      }),
    );
    await store.create(makeTestSnapshot('job-1'));
    const app = new Hono();
    app.route('/ops', createInspector({ store, workflows: [], auth: { token: TOKEN } }));
    const page = async (id: string) =>
      (await app.request(`/ops/instances/${id}`, { headers: { Authorization: `Bearer ${TOKEN}` } })).text();
    expect(await page('chat-1')).toContain(
      '<dt>tokens</dt><dd id="tokens">1200 in, 345 out, 1545 total over 7 model calls</dd>',
    );
    expect(await page('job-1')).not.toContain('id="tokens"');
  });
});
