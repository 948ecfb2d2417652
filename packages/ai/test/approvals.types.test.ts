import { createMemoryStore, createRunner } from '@stepfold/engine';
import { describe, expectTypeOf, it } from 'vitest';
import { type AgentRunner, decideToolCall, type ToolApproval } from '../src/index.js';

// A decision on a tool call is typed: approve, edit with new arguments, or reject with a message.

describe('ToolApproval', () => {
  it('takes the three decisions and refuses anything else at compile time', () => {
    const runner: AgentRunner = createRunner({ store: createMemoryStore(), workflows: [], handlers: {} });
    const decide = (d: ToolApproval) => decideToolCall(runner, 'chat-1', 'call-1', d);
    expectTypeOf(decide).parameter(0).toEqualTypeOf<ToolApproval>();
    void [
      () => decide({ decision: 'approve' }),
      () => decide({ decision: 'edit', input: { cents: 500 } }),
      () => decide({ decision: 'reject', message: 'too much' }),
      () => decide({ decision: 'reject' }),
      // @ts-expect-error: not a decision
      () => decide({ decision: 'aprove' }),
      // @ts-expect-error: an edit brings the arguments to run with
      () => decide({ decision: 'edit' }),
      // @ts-expect-error: a message is text
      () => decide({ decision: 'reject', message: 42 }),
    ];
  });
});
