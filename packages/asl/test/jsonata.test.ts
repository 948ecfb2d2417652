import { describe, expect, it } from 'vitest';
import { AslImportError, AslRuntimeError, aslProblems, fromAsl } from '../src/index.js';
import { FN, type Resources, runMachine } from './run-machine.js';

const run = async (machine: unknown, input: unknown, resources?: Resources) =>
  (await runMachine(machine, input, resources)).h;

function refused(machine: unknown): AslImportError {
  try {
    fromAsl(machine);
  } catch (e) {
    expect(e).toBeInstanceOf(AslImportError);
    return e as AslImportError;
  }
  throw new Error('imported');
}

describe('JSONata states', () => {
  it('take Arguments, give Output, and Assign variables that later states read', async () => {
    const calls: unknown[] = [];
    const h = await run(
      {
        QueryLanguage: 'JSONata',
        StartAt: 'Quote',
        States: {
          Quote: {
            Type: 'Task',
            Resource: `${FN}quote`,
            Arguments: {
              sku: '{% $states.input.sku %}',
              qty: '{% $count($states.input.lines) %}',
              fixed: 'as is',
            },
            Assign: { price: '{% $states.result.price %}', seen: '{% $states.input.sku %}' },
            Output: { quote: '{% $states.result.price * 2 %}' },
            Next: 'Summary',
          },
          Summary: {
            Type: 'Pass',
            Output: '{% { "sku": $seen, "price": $price, "double": $states.input.quote } %}',
            End: true,
          },
        },
      },
      { sku: 'A', lines: [1, 2, 3] },
      {
        quote: (args) => {
          calls.push(args);
          return { price: 21 };
        },
      },
    );
    expect(calls).toEqual([{ sku: 'A', qty: 3, fixed: 'as is' }]);
    expect(h.status).toBe('completed');
    expect(h.snapshot.output).toEqual({ sku: 'A', price: 21, double: 42 });
  });

  it('calls lambda:invoke with the FunctionName and Payload of its Arguments', async () => {
    const h = await run(
      {
        QueryLanguage: 'JSONata',
        StartAt: 'Call',
        States: {
          Call: {
            Type: 'Task',
            Resource: 'arn:aws:states:::lambda:invoke',
            Arguments: { FunctionName: 'greet', Payload: { name: '{% $states.input.who %}' } },
            Output: '{% $states.result.Payload %}',
            End: true,
          },
        },
      },
      { who: 'Ada' },
      { greet: (p) => `hello ${(p as { name: string }).name}` },
    );
    expect(h.snapshot.output).toBe('hello Ada');
  });

  it('choose by Condition, and a Fail state takes its Error and Cause from expressions', async () => {
    const machine = {
      QueryLanguage: 'JSONata',
      StartAt: 'Size',
      States: {
        Size: {
          Type: 'Choice',
          Choices: [
            { Condition: '{% $states.input.n > 10 %}', Next: 'Big', Assign: { size: 'big' } },
            {
              Condition: '{% $states.input.n > 0 %}',
              Next: 'Small',
              Output: { n: '{% $states.input.n %}', small: true },
            },
          ],
          Default: 'Nothing',
        },
        Big: { Type: 'Pass', Output: '{% $size %}', End: true },
        Small: { Type: 'Succeed' },
        Nothing: { Type: 'Fail', Error: '{% "Empty." & $string($states.input.n) %}', Cause: 'nothing to do' },
      },
    };
    expect((await run(machine, { n: 11 })).snapshot.output).toBe('big');
    expect((await run(machine, { n: 2 })).snapshot.output).toEqual({ n: 2, small: true });
    const none = await run(machine, { n: 0 });
    expect(none.status).toBe('failed');
    expect(none.snapshot.error).toMatchObject({ code: 'Empty.0', message: 'nothing to do' });
  });

  it('map over Items through ItemSelector, and wait the Seconds an expression gives', async () => {
    const h = await run(
      {
        QueryLanguage: 'JSONata',
        StartAt: 'Pause',
        States: {
          Pause: { Type: 'Wait', Seconds: '{% $states.input.pause %}', Next: 'Each' },
          Each: {
            Type: 'Map',
            Items: '{% $states.input.xs %}',
            ItemSelector: {
              i: '{% $states.context.Map.Item.Index %}',
              v: '{% $states.context.Map.Item.Value %}',
            },
            ItemProcessor: {
              StartAt: 'Square',
              States: {
                Square: {
                  Type: 'Pass',
                  Output: '{% $states.input.v * $states.input.v + $states.input.i %}',
                  End: true,
                },
              },
            },
            Output: { squares: '{% $states.result %}', sum: '{% $sum($states.result) %}' },
            End: true,
          },
        },
      },
      { pause: 30, xs: [1, 2, 3] },
    );
    expect(h.status).toBe('completed');
    expect(h.snapshot.output).toEqual({ squares: [1, 5, 11], sum: 17 });
    expect(h.now).toBeGreaterThanOrEqual(30_000);
  });

  it("a Catch's Output (default $states.errorOutput) and Assign make the state's output", async () => {
    const machine = (output?: unknown) => ({
      QueryLanguage: 'JSONata',
      StartAt: 'Charge',
      States: {
        Charge: {
          Type: 'Task',
          Resource: `${FN}charge`,
          Catch: [
            {
              ErrorEquals: ['States.ALL'],
              ...(output === undefined ? {} : { Output: output }),
              Assign: { why: '{% $states.errorOutput.Cause %}' },
              Next: 'After',
            },
          ],
          End: true,
        },
        After: { Type: 'Pass', Output: { got: '{% $states.input %}', why: '{% $why %}' }, End: true },
      },
    });
    const charge = () => {
      throw new AslRuntimeError('Card.Declined', 'no funds');
    };
    const plain = await run(machine(), { order: 1 }, { charge });
    expect(plain.snapshot.output).toEqual({
      got: { Error: 'Card.Declined', Cause: 'no funds' },
      why: 'no funds',
    });
    const shaped = await run(
      machine({ order: '{% $states.input.order %}', error: '{% $states.errorOutput.Error %}' }),
      { order: 1 },
      { charge },
    );
    expect(shaped.snapshot.output).toEqual({ got: { order: 1, error: 'Card.Declined' }, why: 'no funds' });
  });

  it('an expression that fails is States.QueryEvaluationError, which a Catch takes', async () => {
    const machine = (catcher: boolean) => ({
      QueryLanguage: 'JSONata',
      StartAt: 'Read',
      States: {
        Read: {
          Type: 'Task',
          Resource: `${FN}echo`,
          Arguments: { v: '{% $states.input.missing %}' },
          ...(catcher ? { Catch: [{ ErrorEquals: ['States.QueryEvaluationError'], Next: 'Caught' }] } : {}),
          End: true,
        },
        ...(catcher ? { Caught: { Type: 'Pass', Output: '{% $states.input.Error %}', End: true } } : {}),
      },
    });
    const echo = (v: unknown) => v;
    const uncaught = await run(machine(false), {}, { echo });
    expect(uncaught.status).toBe('failed');
    expect(uncaught.snapshot.error?.code).toBe('States.QueryEvaluationError');
    expect(uncaught.snapshot.error?.message).toContain(
      "The JSONata expression '$states.input.missing' specified for the field 'Arguments.v' returned nothing (undefined).",
    );
    expect(uncaught.snapshot.error?.message).toMatch(/^An error occurred while executing the state 'Read'/);
    const caught = await run(machine(true), {}, { echo });
    expect(caught.snapshot.output).toBe('States.QueryEvaluationError');
  });

  it('mixes with JSONPath states: a JSONPath machine may have JSONata states, and variables cross', async () => {
    const h = await run(
      {
        StartAt: 'Path',
        States: {
          Path: { Type: 'Pass', Parameters: { 'n.$': '$.n' }, Assign: { 'base.$': '$.n' }, Next: 'Nata' },
          Nata: {
            QueryLanguage: 'JSONata',
            Type: 'Pass',
            Output: { sum: '{% $states.input.n + $base %}' },
            End: true,
          },
        },
      },
      { n: 4 },
    );
    expect(h.snapshot.output).toEqual({ sum: 8 });
  });

  it("has Step Functions' extra functions: $partition, $range, $parse", async () => {
    const h = await run(
      {
        QueryLanguage: 'JSONata',
        StartAt: 'F',
        States: {
          F: {
            Type: 'Pass',
            Output: {
              parts: '{% $partition([1,2,3,4,5], 2) %}',
              range: '{% $range(0, 6, 2) %}',
              parsed: '{% $parse(\'{"a":1}\') %}',
            },
            End: true,
          },
        },
      },
      {},
    );
    expect(h.snapshot.output).toEqual({
      parts: [[1, 2], [3, 4], [5]],
      range: [0, 2, 4, 6],
      parsed: { a: 1 },
    });
  });

  it('refuses at import what a JSONata state cannot have, naming the state and the field', () => {
    const jsonPathField = refused({
      QueryLanguage: 'JSONata',
      StartAt: 'T',
      States: { T: { Type: 'Task', Resource: `${FN}f`, Parameters: { a: 1 }, End: true } },
    });
    expect([jsonPathField.reason, jsonPathField.state, jsonPathField.field]).toEqual([
      'invalid',
      'T',
      'Parameters',
    ]);
    const bad = refused({
      QueryLanguage: 'JSONata',
      StartAt: 'P',
      States: { P: { Type: 'Pass', Output: { x: '{% $states.input.( %}' }, End: true } },
    });
    expect([bad.state, bad.field]).toEqual(['P', 'Output.x']);
    const back = refused({
      QueryLanguage: 'JSONata',
      StartAt: 'P',
      States: { P: { QueryLanguage: 'JSONPath', Type: 'Pass', End: true } },
    });
    expect([back.state, back.field]).toEqual(['P', 'QueryLanguage']);
    const rule = refused({
      QueryLanguage: 'JSONata',
      StartAt: 'C',
      States: {
        C: { Type: 'Choice', Choices: [{ Variable: '$.x', BooleanEquals: true, Next: 'E' }], Default: 'E' },
        E: { Type: 'Succeed' },
      },
    });
    expect([rule.state, rule.field]).toEqual(['C', 'Choices[0].Variable']);
    const jsonataInPath = refused({ StartAt: 'P', States: { P: { Type: 'Pass', Output: 1, End: true } } });
    expect([jsonataInPath.state, jsonataInPath.field]).toEqual(['P', 'Output']);
  });
});

describe('aslProblems', () => {
  it('lists the first problem of every state, nested ones too; none for a machine that imports', () => {
    const problems = aslProblems({
      StartAt: 'A',
      States: {
        A: { Type: 'Task', Resource: 'arn:aws:states:::sqs:sendMessage', Next: 'B' },
        B: { Type: 'Task', Resource: `${FN}f`, HeartbeatSeconds: 5, Next: 'M' },
        M: {
          Type: 'Map',
          ItemProcessor: {
            StartAt: 'X',
            States: { X: { Type: 'Pass', Parameters: { 'v.$': 'States.UUID()' }, End: true } },
          },
          End: true,
        },
      },
    });
    expect(problems.map((p) => [p.state, p.field, p.reason])).toEqual([
      ['A', 'Resource', 'unsupported'],
      ['B', 'HeartbeatSeconds', 'unsupported'],
      ['M/X', 'Parameters.v.$', 'unsupported'],
    ]);
    expect(aslProblems({ StartAt: 'P', States: { P: { Type: 'Pass', End: true } } })).toEqual([]);
  });
});
