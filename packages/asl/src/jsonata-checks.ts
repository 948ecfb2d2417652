import { checkErrorHandlers, checkTask, type Fail, UNSUPPORTED } from './checks.js';
import { isJsonataExpression, jsonataProblem } from './jsonata.js';
import { validCount, validPercent } from './map-tolerance.js';
import type { AslState } from './plan.js';

// What a state with `QueryLanguage: "JSONata"` may carry: `Arguments` and `Output` instead of the
// five JSONPath fields, `Condition` in Choice rules, `Items` in a Map, expressions in Wait and Fail
// fields. Every `{% … %}` must compile; JSONPath fields are refused, naming the field.

const COMMON = ['Type', 'Comment', 'QueryLanguage', 'Assign', 'Output'];
const FLOW = ['Next', 'End'];
const ERRORS = ['Retry', 'Catch'];

const FIELDS: Record<string, string[]> = {
  Pass: [...COMMON, ...FLOW],
  Task: [...COMMON, ...FLOW, ...ERRORS, 'Resource', 'Arguments'],
  Choice: [...COMMON, 'Choices', 'Default'],
  Wait: [...COMMON, ...FLOW, 'Seconds', 'Timestamp'],
  Succeed: ['Type', 'Comment', 'QueryLanguage', 'Output'],
  Fail: ['Type', 'Comment', 'QueryLanguage', 'Error', 'Cause'],
  Parallel: [...COMMON, ...FLOW, ...ERRORS, 'Branches', 'Arguments'],
  Map: [
    ...COMMON,
    ...FLOW,
    ...ERRORS,
    'ItemProcessor',
    'Iterator',
    'Items',
    'ItemSelector',
    'MaxConcurrency',
    'ToleratedFailureCount',
    'ToleratedFailurePercentage',
  ],
};

/** The JSONPath fields a JSONata state cannot have. */
const JSONPATH_ONLY = new Set([
  'InputPath',
  'OutputPath',
  'Parameters',
  'ResultSelector',
  'ResultPath',
  'Result',
  'ItemsPath',
  'SecondsPath',
  'TimestampPath',
  'ErrorPath',
  'CausePath',
  'MaxConcurrencyPath',
  'ToleratedFailureCountPath',
  'ToleratedFailurePercentagePath',
]);

/** Refuses what a JSONata state cannot run as written. */
export function checkJsonataState(state: AslState, fail: Fail): void {
  const allowed = FIELDS[state.Type];
  if (!allowed)
    fail(
      typeof state.Type === 'string' ? 'unsupported' : 'invalid',
      'Type',
      `state type ${JSON.stringify(state.Type)} is not supported`,
    );
  for (const field of Object.keys(state)) {
    if (allowed!.includes(field)) continue;
    if (Object.hasOwn(UNSUPPORTED, field)) fail('unsupported', field, UNSUPPORTED[field]!);
    if (JSONPATH_ONLY.has(field))
      fail('invalid', field, `${field} is a JSONPath field: a JSONata state cannot use it`);
    fail('invalid', field, `field ${field} is not allowed in a ${state.Type} state`);
  }
  const hasNext = typeof state['Next'] === 'string';
  if (allowed!.includes('Next') && hasNext === (state['End'] === true))
    fail('invalid', hasNext ? 'End' : 'Next', 'a state needs exactly one of Next and End: true');
  const expressions = (value: unknown, field: string) => {
    const p = jsonataProblem(value, field);
    if (p) fail('invalid', p[0], p[1]);
  };
  for (const f of [
    'Arguments',
    'Output',
    'Assign',
    'Items',
    'ItemSelector',
    'MaxConcurrency',
    'ToleratedFailureCount',
    'ToleratedFailurePercentage',
    'Seconds',
    'Timestamp',
    'Error',
    'Cause',
  ])
    if (state[f] !== undefined) expressions(state[f], f);
  if (
    state['Assign'] !== undefined &&
    (state['Assign'] === null || typeof state['Assign'] !== 'object' || Array.isArray(state['Assign']))
  )
    fail('invalid', 'Assign', 'Assign must be an object of variable names');
  if (state.Type === 'Task') {
    // An expression for the whole of Arguments is checked when it runs.
    if (isJsonataExpression(state['Arguments']))
      checkTask({ ...state, Arguments: { FunctionName: '' } }, fail, 'Arguments');
    else checkTask(state, fail, 'Arguments');
  }
  if (state.Type === 'Choice') checkRules(state, fail, expressions);
  if (state.Type === 'Wait' && (state['Seconds'] === undefined) === (state['Timestamp'] === undefined))
    fail('invalid', 'Seconds', 'a Wait needs exactly one of Seconds and Timestamp');
  if (state.Type === 'Wait' && state['Seconds'] !== undefined && !isJsonataExpression(state['Seconds'])) {
    const s = state['Seconds'];
    if (typeof s !== 'number' || !Number.isInteger(s) || s < 0)
      fail('invalid', 'Seconds', 'Seconds must be a non-negative integer or a JSONata expression');
  }
  if (state.Type === 'Map') {
    if ((state['ItemProcessor'] === undefined) === (state['Iterator'] === undefined))
      fail('invalid', 'ItemProcessor', 'a Map needs exactly one of ItemProcessor and Iterator');
    const mode = (state['ItemProcessor'] as { ProcessorConfig?: { Mode?: string } } | undefined)
      ?.ProcessorConfig?.Mode;
    if (mode !== undefined && mode !== 'INLINE')
      fail('unsupported', 'ItemProcessor.ProcessorConfig.Mode', `Map mode ${mode} is not supported`);
    const items = state['Items'];
    if (items !== undefined && !Array.isArray(items) && !isJsonataExpression(items))
      fail('invalid', 'Items', 'Items must be an array or a JSONata expression');
    const count = state['ToleratedFailureCount'];
    if (count !== undefined && !isJsonataExpression(count) && !validCount(count))
      fail('invalid', 'ToleratedFailureCount', 'must be a non-negative integer or a JSONata expression');
    const percent = state['ToleratedFailurePercentage'];
    if (percent !== undefined && !isJsonataExpression(percent) && !validPercent(percent))
      fail('invalid', 'ToleratedFailurePercentage', 'must be a number from 0 to 100 or a JSONata expression');
  }
  for (const f of ERRORS)
    if (state[f] !== undefined) {
      checkErrorHandlers(state, f, fail, true);
      if (f === 'Catch')
        (state[f] as Array<Record<string, unknown>>).forEach((c, i) => {
          if (c['Output'] !== undefined) expressions(c['Output'], `Catch[${i}].Output`);
          if (c['Assign'] !== undefined) expressions(c['Assign'], `Catch[${i}].Assign`);
        });
    }
}

function checkRules(state: AslState, fail: Fail, expressions: (value: unknown, field: string) => void): void {
  const choices = state['Choices'];
  if (!Array.isArray(choices) || choices.length === 0)
    fail('invalid', 'Choices', 'a Choice needs a non-empty Choices list');
  (choices as unknown[]).forEach((rule, i) => {
    const at = `Choices[${i}]`;
    if (rule === null || typeof rule !== 'object' || Array.isArray(rule))
      fail('invalid', at, 'a choice rule must be an object');
    const r = rule as Record<string, unknown>;
    for (const k of Object.keys(r))
      if (!['Condition', 'Next', 'Assign', 'Output', 'Comment'].includes(k))
        fail('invalid', `${at}.${k}`, `field ${k} is not allowed in a JSONata choice rule (use Condition)`);
    const c = r['Condition'];
    if (typeof c !== 'boolean' && !isJsonataExpression(c))
      fail(
        'invalid',
        `${at}.Condition`,
        'a JSONata choice rule needs a Condition: a JSONata expression or a boolean',
      );
    if (typeof r['Next'] !== 'string') fail('invalid', `${at}.Next`, 'a choice rule needs Next');
    for (const f of ['Condition', 'Assign', 'Output'])
      if (r[f] !== undefined) expressions(r[f], `${at}.${f}`);
  });
}
