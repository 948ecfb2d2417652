import { composition, createMemoryStore, createRunner, toMermaid } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { AslRuntimeError, aslHandlers, fromAsl } from '../src/index.js';
import { FN } from './run-machine.js';

// An order state machine as a Step Functions user writes it: a Map over the lines calling a
// Lambda per line, a retried charge, and a Choice on the total.
const machine = {
  StartAt: 'Price lines',
  States: {
    'Price lines': {
      Type: 'Map',
      ItemsPath: '$.lines',
      MaxConcurrency: 2,
      ItemProcessor: {
        StartAt: 'Price',
        States: { Price: { Type: 'Task', Resource: `${FN}price`, End: true } },
      },
      ResultSelector: { 'total.$': 'States.ArrayLength($)', 'prices.$': '$' },
      ResultPath: '$.priced',
      Next: 'Charge',
    },
    Charge: {
      Type: 'Task',
      Resource: 'arn:aws:states:::lambda:invoke',
      Parameters: { FunctionName: 'charge', 'Payload.$': '$.priced' },
      ResultSelector: { 'receipt.$': '$.Payload.receipt' },
      ResultPath: '$.payment',
      Retry: [{ ErrorEquals: ['Gateway.Timeout'], IntervalSeconds: 1, MaxAttempts: 3 }],
      Next: 'Big order?',
    },
    'Big order?': {
      Type: 'Choice',
      Choices: [{ Variable: '$.priced.total', NumericGreaterThanEquals: 3, Next: 'Review' }],
      Default: 'Done',
    },
    Review: { Type: 'Pass', Result: true, ResultPath: '$.review', Next: 'Done' },
    Done: { Type: 'Succeed', OutputPath: '$.payment' },
  },
};

describe('an imported state machine on a runner', () => {
  it('runs on the memory store with its Map iterations as child instances, and draws', async () => {
    const imported = fromAsl(machine, { name: 'order' });
    let charges = 0;
    const runner = createRunner({
      store: createMemoryStore(),
      workflows: [imported.definition, ...imported.workflows],
      handlers: aslHandlers(imported, {
        resources: {
          price: (line) => (line as { qty: number }).qty * 10,
          charge: (priced) => {
            if (++charges < 2) throw new AslRuntimeError('Gateway.Timeout', 'slow');
            return { receipt: `R-${(priced as { prices: number[] }).prices.join('+')}` };
          },
        },
        now: () => Date.now() - 1000,
      }),
      kinds: [composition],
    });
    await runner.start('order', 'o-1', { lines: [{ qty: 1 }, { qty: 2 }, { qty: 3 }] });
    let s = (await runner.get('o-1'))!;
    for (let i = 0; i < 50 && s.status !== 'completed' && s.status !== 'failed'; i++) {
      await runner.processDue();
      s = (await runner.get('o-1'))!;
    }
    expect(s.status).toBe('completed');
    expect(s.output).toEqual({ receipt: 'R-10+20+30' });
    expect(charges).toBe(2);
    expect(s.steps['Review']?.status).toBe('completed');
    // The tools read it as any definition: the diagram's steps are the states (ids keep the
    // characters a step id may hold; the step's description has the name as written).
    const diagram = toMermaid(imported.definition as never);
    expect(diagram).toContain('Price_lines:map');
    expect(diagram).toContain('Big_order_:route');
    expect(s.workflow.name).toBe('order');
  });
});
