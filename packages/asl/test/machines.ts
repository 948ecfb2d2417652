import { AslRuntimeError, type LambdaFunction } from '../src/index.js';
import { FN } from './run-machine.js';

// State machines the store and history tests import, written for these tests: an order (Pass with
// intrinsic functions, an inline Map, a Task with Retry and Catch, a Choice, a Wait, a Parallel)
// and a JSONata one (Arguments, Output, Assign, a Condition, a Fail with an expression).

/** An order: price each line in a Map, charge (retried, declines caught), wait for big ones, ship in parallel. */
export const ORDER_MACHINE = {
  Comment: 'an order',
  StartAt: 'Prepare',
  States: {
    Prepare: {
      Type: 'Pass',
      Parameters: {
        'order.$': '$.order',
        'lineCount.$': 'States.ArrayLength($.lines)',
        'label.$': "States.Format('order {}', $.order)",
        'lines.$': '$.lines',
        'declined.$': '$.declined',
      },
      Next: 'Price lines',
    },
    'Price lines': {
      Type: 'Map',
      ItemsPath: '$.lines',
      MaxConcurrency: 2,
      ItemSelector: {
        'index.$': '$$.Map.Item.Index',
        'qty.$': '$$.Map.Item.Value.qty',
        'order.$': '$.order',
      },
      ItemProcessor: {
        StartAt: 'Price',
        States: { Price: { Type: 'Task', Resource: `${FN}price`, End: true } },
      },
      ResultPath: '$.prices',
      Next: 'Charge',
    },
    Charge: {
      Type: 'Task',
      Resource: 'arn:aws:states:::lambda:invoke',
      Parameters: {
        FunctionName: 'charge',
        Payload: {
          'order.$': '$.order',
          'declined.$': '$.declined',
          'total.$': 'States.MathAdd($.prices[0], $.prices[1])',
        },
      },
      ResultSelector: { 'receipt.$': '$.Payload.receipt' },
      ResultPath: '$.payment',
      Retry: [{ ErrorEquals: ['Gateway.Timeout'], IntervalSeconds: 1, MaxAttempts: 2 }],
      Catch: [{ ErrorEquals: ['Card.Declined'], ResultPath: '$.failure', Next: 'Declined' }],
      Next: 'Big order?',
    },
    'Big order?': {
      Type: 'Choice',
      Choices: [{ Variable: '$.lineCount', NumericGreaterThanEquals: 3, Next: 'Cool off' }],
      Default: 'Ship',
    },
    'Cool off': { Type: 'Wait', Seconds: 1, Next: 'Ship' },
    Ship: {
      Type: 'Parallel',
      Branches: [
        { StartAt: 'Label', States: { Label: { Type: 'Task', Resource: `${FN}label`, End: true } } },
        {
          StartAt: 'Note',
          States: {
            Note: {
              Type: 'Pass',
              Parameters: { 'note.$': "States.Format('{} lines', $.lineCount)" },
              End: true,
            },
          },
        },
      ],
      ResultSelector: { 'label.$': '$[0]', 'note.$': '$[1].note' },
      ResultPath: '$.shipping',
      Next: 'Done',
    },
    Done: { Type: 'Succeed' },
    Declined: { Type: 'Pass', Parameters: { 'order.$': '$.order', 'error.$': '$.failure.Error' }, End: true },
  },
};

/** The order machine's Lambda functions: `charge` times out once per order, then declines or charges. */
export function orderFunctions(): Record<string, LambdaFunction> {
  const attempts = new Map<string, number>();
  return {
    price: (line) => (line as { qty: number }).qty * 10,
    charge: (payment) => {
      const p = payment as { order: string; declined: boolean; total: number };
      const n = (attempts.get(p.order) ?? 0) + 1;
      attempts.set(p.order, n);
      if (p.declined) throw new AslRuntimeError('Card.Declined', 'no funds');
      if (n === 1) throw new AslRuntimeError('Gateway.Timeout', 'the gateway did not answer');
      return { receipt: `R-${p.order}-${p.total}` };
    },
    label: (order) => `L-${(order as { order: string }).order}`,
  };
}

/** Two orders: a big one that is charged on its second attempt, and one whose card is declined. */
export const ORDER_RUNS = [
  {
    id: 'big',
    input: { order: 'A1', lines: [{ qty: 1 }, { qty: 2 }, { qty: 3 }], declined: false },
    output: {
      order: 'A1',
      lineCount: 3,
      label: 'order A1',
      lines: [{ qty: 1 }, { qty: 2 }, { qty: 3 }],
      declined: false,
      prices: [10, 20, 30],
      payment: { receipt: 'R-A1-30' },
      shipping: { label: 'L-A1', note: '3 lines' },
    },
  },
  {
    id: 'declined',
    input: { order: 'B2', lines: [{ qty: 1 }, { qty: 1 }], declined: true },
    output: { order: 'B2', error: 'Card.Declined' },
  },
] as const;

/** A JSONata machine: score a name, keep the total in a variable, pass or fail on it. */
export const SCORE_MACHINE = {
  QueryLanguage: 'JSONata',
  StartAt: 'Score',
  States: {
    Score: {
      Type: 'Task',
      Resource: `${FN}score`,
      Arguments: { name: '{% $states.input.name %}', points: '{% $sum($states.input.points) %}' },
      Assign: { total: '{% $states.result.total %}' },
      Output: { name: '{% $states.input.name %}', grade: '{% $states.result.grade %}' },
      Next: 'Passed?',
    },
    'Passed?': {
      Type: 'Choice',
      Choices: [{ Condition: '{% $total >= 10 %}', Next: 'Passed' }],
      Default: 'Failed',
    },
    Passed: {
      Type: 'Pass',
      Output: { result: '{% $uppercase($states.input.name) & " passed with " & $string($total) %}' },
      End: true,
    },
    Failed: { Type: 'Fail', Error: 'Score.TooLow', Cause: '{% "total " & $string($total) %}' },
  },
};

/** The score machine's one function. */
export function scoreFunctions(): Record<string, LambdaFunction> {
  return {
    score: (args) => {
      const { points } = args as { points: number };
      return { total: points, grade: points >= 10 ? 'A' : 'C' };
    },
  };
}
