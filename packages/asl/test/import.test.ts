import { defineWorkflow } from '@stepfold/engine';
import { describe, expect, it } from 'vitest';
import { AslImportError, AslRuntimeError, fromAsl } from '../src/index.js';
import { FN, type Resources, runMachine } from './run-machine.js';

const run = async (machine: unknown, input: unknown, resources?: Resources) =>
  (await runMachine(machine, input, resources, () => 1)).h;

describe('fromAsl', () => {
  it('makes plain stepfold definitions that defineWorkflow accepts', () => {
    const imported = fromAsl(
      {
        StartAt: 'Check',
        States: {
          Check: {
            Type: 'Choice',
            Choices: [{ Variable: '$.n', NumericGreaterThan: 1, Next: 'Big' }],
            Default: 'Small',
          },
          Big: { Type: 'Pass', Result: 'big', End: true },
          Small: { Type: 'Wait', Seconds: 5, Next: 'Each' },
          Each: {
            Type: 'Map',
            ItemsPath: '$.items',
            ItemProcessor: { StartAt: 'One', States: { One: { Type: 'Pass', End: true } } },
            End: true,
          },
        },
      },
      { name: 'shapes' },
    );
    const def = defineWorkflow(imported.definition);
    expect(Object.keys(def.steps)).toContain('Check:route');
    expect(def.steps['Small:wait']).toMatchObject({ kind: 'sleep', ms: 5000 });
    expect(imported.workflows.map((w) => defineWorkflow(w).name)).toEqual(['shapes/Each']);
  });

  it('refuses what it does not run, naming the state and the field', () => {
    const refused = (machine: unknown) => {
      try {
        fromAsl(machine);
      } catch (e) {
        expect(e).toBeInstanceOf(AslImportError);
        expect((e as AslImportError).code).toBe('INVALID_DEFINITION');
        return e as AslImportError;
      }
      throw new Error('imported');
    };
    const sqs = refused({
      StartAt: 'Send',
      States: { Send: { Type: 'Task', Resource: 'arn:aws:states:::sqs:sendMessage', End: true } },
    });
    expect([sqs.reason, sqs.state, sqs.field]).toEqual(['unsupported', 'Send', 'Resource']);
    const timeout = refused({
      StartAt: 'T',
      States: { T: { Type: 'Task', Resource: `${FN}f`, TimeoutSeconds: 3, End: true } },
    });
    expect([timeout.state, timeout.field]).toEqual(['T', 'TimeoutSeconds']);
    // A JSONata state takes Arguments and Output, not the JSONPath fields.
    const jsonata = refused({
      QueryLanguage: 'JSONata',
      StartAt: 'P',
      States: { P: { Type: 'Pass', ResultPath: '$.x', End: true } },
    });
    expect([jsonata.reason, jsonata.state, jsonata.field]).toEqual(['invalid', 'P', 'ResultPath']);
    const deep = refused({
      StartAt: 'M',
      States: {
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
    expect([deep.state, deep.field]).toEqual(['M/X', 'Parameters.v.$']);
    const rule = refused({
      StartAt: 'C',
      States: { C: { Type: 'Choice', Choices: [{ Variable: '$.a', Like: 1, Next: 'C' }] } },
    });
    expect([rule.state, rule.field]).toEqual(['C', 'Choices[0].Like']);
  });
});

describe('an imported state machine in the harness', () => {
  it('runs the I/O pipeline, intrinsics, variables and a Lambda task', async () => {
    const h = await run(
      {
        StartAt: 'Shape',
        States: {
          Shape: {
            Type: 'Pass',
            InputPath: '$.order',
            Parameters: {
              'id.$': '$.id',
              'label.$': "States.Format('order {}', $.id)",
              'names.$': '$.lines[*].sku',
            },
            Assign: { 'orderId.$': '$.id' },
            Next: 'Charge',
          },
          Charge: {
            Type: 'Task',
            Resource: `${FN}charge`,
            Parameters: { 'order.$': '$orderId' },
            ResultSelector: { 'receipt.$': '$.receipt' },
            ResultPath: '$.payment',
            OutputPath: '$',
            End: true,
          },
        },
      },
      { order: { id: 7, lines: [{ sku: 'A' }, { sku: 'B' }] } },
      { charge: (input) => ({ receipt: `R-${(input as { order: number }).order}`, extra: true }) },
    );
    expect(h.status).toBe('completed');
    expect(h.snapshot.output).toEqual({
      id: 7,
      label: 'order 7',
      names: ['A', 'B'],
      payment: { receipt: 'R-7' },
    });
  });

  it('retries, then catches with the error and cause in the output', async () => {
    let calls = 0;
    const h = await run(
      {
        StartAt: 'Flaky',
        States: {
          Flaky: {
            Type: 'Task',
            Resource: `${FN}flaky`,
            Retry: [{ ErrorEquals: ['Busy'], MaxAttempts: 2, IntervalSeconds: 1 }],
            Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: 'Handled' }],
            End: true,
          },
          Handled: { Type: 'Pass', End: true },
        },
      },
      { job: 1 },
      {
        flaky: () => {
          calls++;
          throw new AslRuntimeError('Busy', 'try later');
        },
      },
    );
    expect(calls).toBe(3);
    expect(h.snapshot.output).toEqual({ job: 1, failure: { Error: 'Busy', Cause: 'try later' } });
  });

  it("runs a Map per item and a Parallel per branch, and fails with a Fail state's error", async () => {
    const h = await run(
      {
        StartAt: 'Each',
        States: {
          Each: {
            Type: 'Map',
            ItemsPath: '$.xs',
            ItemSelector: { 'x.$': '$$.Map.Item.Value', 'i.$': '$$.Map.Item.Index' },
            ItemProcessor: {
              StartAt: 'Double',
              States: {
                Double: { Type: 'Pass', Parameters: { 'v.$': 'States.MathAdd($.x, $.x)' }, End: true },
              },
            },
            ResultPath: '$.doubled',
            Next: 'Both',
          },
          Both: {
            Type: 'Parallel',
            Branches: [
              { StartAt: 'L', States: { L: { Type: 'Pass', Result: 'left', End: true } } },
              { StartAt: 'R', States: { R: { Type: 'Pass', InputPath: '$.doubled[1]', End: true } } },
            ],
            ResultPath: '$.both',
            Next: 'Stop',
          },
          Stop: {
            Type: 'Fail',
            Error: 'Done',
            CausePath: "States.Format('{} items', States.ArrayLength($.xs))",
          },
        },
      },
      { xs: [1, 2] },
    );
    expect(h.status).toBe('failed');
    expect(h.snapshot.error).toMatchObject({ code: 'Done', message: '2 items' });
    const both = h.snapshot.steps['Both:after']?.output as { value: { both: unknown; doubled: unknown } };
    expect(both.value.doubled).toEqual([{ v: 2 }, { v: 4 }]);
    expect(both.value.both).toEqual(['left', { v: 4 }]);
  });
});
