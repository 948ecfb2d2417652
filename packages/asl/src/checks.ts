import { ruleProblem } from './choice-rules.js';
import { AslImportError } from './errors.js';
import { IntrinsicSyntaxError, isIntrinsic, parseIntrinsic } from './intrinsics.js';
import { JsonPathSyntaxError, parsePath } from './json-path.js';
import { checkJsonataState } from './jsonata-checks.js';
import { TOLERANCE_FIELDS, validCount, validPercent } from './map-tolerance.js';
import type { AslState, QueryLanguage } from './plan.js';

// What `fromAsl` accepts, state by state: the fields each state type may have, which of them are
// refused because this importer does not run them (yet), and the shape of every path, template and
// rule, so a machine that imports runs exactly as written or not at all.

const COMMON = ['Type', 'Comment', 'QueryLanguage', 'Assign'];
const IO = ['InputPath', 'OutputPath'];
const FLOW = ['Next', 'End'];
const ERRORS = ['Retry', 'Catch'];

/** The fields each state type may carry (JSONPath). */
const FIELDS: Record<string, string[]> = {
  Pass: [...COMMON, ...IO, ...FLOW, 'Result', 'ResultPath', 'Parameters'],
  Task: [...COMMON, ...IO, ...FLOW, ...ERRORS, 'Resource', 'Parameters', 'ResultPath', 'ResultSelector'],
  Choice: [...COMMON, ...IO, 'Choices', 'Default'],
  Wait: [...COMMON, ...IO, ...FLOW, 'Seconds', 'SecondsPath', 'Timestamp', 'TimestampPath'],
  Succeed: [...COMMON, ...IO],
  Fail: ['Type', 'Comment', 'QueryLanguage', 'Error', 'ErrorPath', 'Cause', 'CausePath'],
  Parallel: [...COMMON, ...IO, ...FLOW, ...ERRORS, 'Branches', 'Parameters', 'ResultPath', 'ResultSelector'],
  Map: [
    ...COMMON,
    ...IO,
    ...FLOW,
    ...ERRORS,
    'ItemProcessor',
    'Iterator',
    'ItemsPath',
    'ItemSelector',
    'Parameters',
    'MaxConcurrency',
    'MaxConcurrencyPath',
    ...TOLERANCE_FIELDS,
    'ResultPath',
    'ResultSelector',
  ],
};

/** Fields AWS has that this importer refuses, with why. */
export const UNSUPPORTED: Record<string, string> = {
  TimeoutSeconds: 'task timeouts are not supported yet',
  TimeoutSecondsPath: 'task timeouts are not supported yet',
  HeartbeatSeconds: 'task heartbeats are not supported yet',
  HeartbeatSecondsPath: 'task heartbeats are not supported yet',
  Credentials: 'cross-account task credentials are not supported',
  ItemReader: 'distributed Map (ItemReader) is not supported',
  ItemBatcher: 'distributed Map (ItemBatcher) is not supported',
  ResultWriter: 'distributed Map (ResultWriter) is not supported',
  Label: 'distributed Map (Label) is not supported',
};

/** The Lambda invoke integration's resource; the only service integration supported. */
export const LAMBDA_INVOKE = 'arn:aws:states:::lambda:invoke';

/** Whether `resource` is a Lambda function ARN (`arn:<partition>:lambda:<region>:<account>:function:<name>`). */
export function isFunctionArn(resource: string): boolean {
  const parts = resource.split(':');
  return parts[0] === 'arn' && parts[2] === 'lambda' && parts[5] === 'function' && parts.length >= 7;
}

/**
 * The query language a state uses: its own `QueryLanguage`, else the machine's. A JSONata machine's
 * states cannot go back to JSONPath (AWS refuses that too).
 */
export function languageOf(state: AslState, machine: QueryLanguage, at: string): QueryLanguage {
  const own = state !== null && typeof state === 'object' ? state['QueryLanguage'] : undefined;
  if (own === undefined) return machine;
  if (own !== 'JSONPath' && own !== 'JSONata')
    throw new AslImportError('invalid', at, 'QueryLanguage', 'must be JSONPath or JSONata');
  if (own === 'JSONPath' && machine === 'JSONata')
    throw new AslImportError(
      'invalid',
      at,
      'QueryLanguage',
      'a state of a JSONata state machine cannot use JSONPath',
    );
  return own;
}

/** Refuses what the state cannot run as written; `at` is its path from the top. */
export function checkState(state: AslState, at: string, language: QueryLanguage = 'JSONPath'): void {
  const fail = (reason: 'unsupported' | 'invalid', field: string, detail: string): never => {
    throw new AslImportError(reason, at, field, detail);
  };
  if (state === null || typeof state !== 'object') fail('invalid', '', 'a state must be an object');
  if (language === 'JSONata') {
    checkJsonataState(state, fail);
    return;
  }
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
    if (['Arguments', 'Output', 'Items', 'Condition'].includes(field))
      fail('invalid', field, `${field} is a JSONata field: set QueryLanguage to JSONata to use it`);
    fail('invalid', field, `field ${field} is not allowed in a ${state.Type} state`);
  }
  const hasNext = typeof state['Next'] === 'string';
  if (allowed!.includes('Next') && hasNext === (state['End'] === true))
    fail('invalid', hasNext ? 'End' : 'Next', 'a state needs exactly one of Next and End: true');
  for (const f of ['InputPath', 'OutputPath', 'ResultPath'])
    if (state[f] !== undefined && state[f] !== null) checkPath(state[f], f, fail);
  for (const f of [
    'ItemsPath',
    'SecondsPath',
    'TimestampPath',
    'MaxConcurrencyPath',
    'ToleratedFailureCountPath',
    'ToleratedFailurePercentagePath',
  ])
    if (state[f] !== undefined) checkPath(state[f], f, fail);
  for (const f of ['ErrorPath', 'CausePath']) if (state[f] !== undefined) checkExpression(state[f], f, fail);
  for (const f of ['Parameters', 'ResultSelector', 'ItemSelector', 'Assign'])
    if (state[f] !== undefined) checkTemplate(state[f], f, fail);
  if (state.Type === 'Task') checkTask(state, fail);
  if (state.Type === 'Choice') checkChoice(state, fail);
  if (state.Type === 'Wait') {
    const given = ['Seconds', 'SecondsPath', 'Timestamp', 'TimestampPath'].filter(
      (f) => state[f] !== undefined,
    );
    if (given.length !== 1)
      fail(
        'invalid',
        'Seconds',
        'a Wait needs exactly one of Seconds, SecondsPath, Timestamp, TimestampPath',
      );
  }
  if (state.Type === 'Map' && (state['ItemProcessor'] === undefined) === (state['Iterator'] === undefined))
    fail('invalid', 'ItemProcessor', 'a Map needs exactly one of ItemProcessor and Iterator');
  if (state.Type === 'Map' && state['ItemSelector'] !== undefined && state['Parameters'] !== undefined)
    fail('invalid', 'ItemSelector', 'a Map takes ItemSelector or Parameters, not both');
  const mode = (state['ItemProcessor'] as { ProcessorConfig?: { Mode?: string } } | undefined)
    ?.ProcessorConfig?.Mode;
  if (mode !== undefined && mode !== 'INLINE')
    fail('unsupported', 'ItemProcessor.ProcessorConfig.Mode', `Map mode ${mode} is not supported`);
  if (state.Type === 'Map') checkTolerance(state, fail);
  for (const f of ERRORS) if (state[f] !== undefined) checkErrorHandlers(state, f, fail);
}

/** A JSONPath Map's tolerance: a count, a percentage, each given once (literal or path). */
function checkTolerance(state: AslState, fail: Fail): void {
  for (const f of ['ToleratedFailureCount', 'ToleratedFailurePercentage'])
    if (state[f] !== undefined && state[`${f}Path`] !== undefined)
      fail('invalid', f, `a Map takes ${f} or ${f}Path, not both`);
  if (state['ToleratedFailureCount'] !== undefined && !validCount(state['ToleratedFailureCount']))
    fail('invalid', 'ToleratedFailureCount', 'must be a non-negative integer');
  if (state['ToleratedFailurePercentage'] !== undefined && !validPercent(state['ToleratedFailurePercentage']))
    fail('invalid', 'ToleratedFailurePercentage', 'must be a number from 0 to 100');
}

/** Throws an {@link AslImportError} for the state being checked. */
export type Fail = (reason: 'unsupported' | 'invalid', field: string, detail: string) => never;

function checkPath(path: unknown, field: string, fail: Fail): void {
  if (typeof path !== 'string') fail('invalid', field, 'must be a JSONPath string');
  try {
    parsePath(path as string);
  } catch (e) {
    if (e instanceof JsonPathSyntaxError) fail('invalid', field, e.message);
    throw e;
  }
}

function checkExpression(text: unknown, field: string, fail: Fail): void {
  if (typeof text === 'string' && isIntrinsic(text)) {
    try {
      parseIntrinsic(text);
    } catch (e) {
      if (e instanceof IntrinsicSyntaxError)
        fail(e.message.endsWith('not supported') ? 'unsupported' : 'invalid', field, e.message);
      throw e;
    }
  } else checkPath(text, field, fail);
}

function checkTemplate(template: unknown, field: string, fail: Fail): void {
  if (Array.isArray(template)) {
    template.forEach((v, i) => checkTemplate(v, `${field}[${i}]`, fail));
    return;
  }
  if (template === null || typeof template !== 'object') return;
  for (const [k, v] of Object.entries(template)) {
    if (k.endsWith('.$')) {
      if (typeof v !== 'string')
        fail('invalid', `${field}.${k}`, 'a .$ field needs a path or an intrinsic function');
      checkExpression(v, `${field}.${k}`, fail);
    } else checkTemplate(v, `${field}.${k}`, fail);
  }
}

/** Checks a Task's resource (only Lambda); `args` is where lambda:invoke's FunctionName is. */
export function checkTask(state: AslState, fail: Fail, args = 'Parameters'): void {
  const resource = state['Resource'];
  if (typeof resource !== 'string') fail('invalid', 'Resource', 'a Task needs a Resource');
  const r = resource as string;
  if (r.startsWith('arn:aws:states:::')) {
    if (r !== LAMBDA_INVOKE)
      fail(
        'unsupported',
        'Resource',
        `${r}: only Lambda (arn:aws:states:::lambda:invoke) is supported among service integrations`,
      );
    const params = state[args] as Record<string, unknown> | undefined;
    if (
      params === null ||
      typeof params !== 'object' ||
      (params['FunctionName'] === undefined && params['FunctionName.$'] === undefined)
    )
      fail('invalid', `${args}.FunctionName`, `lambda:invoke needs ${args}.FunctionName`);
  } else if (!isFunctionArn(r)) fail('unsupported', 'Resource', `${r}: only Lambda functions are supported`);
}

function checkChoice(state: AslState, fail: Fail): void {
  const choices = state['Choices'];
  if (!Array.isArray(choices) || choices.length === 0)
    fail('invalid', 'Choices', 'a Choice needs a non-empty Choices list');
  (choices as unknown[]).forEach((rule, i) => {
    const p = ruleProblem(rule, true);
    if (p)
      fail(
        p.message.includes('not supported') ? 'unsupported' : 'invalid',
        `Choices[${i}]${p.field ? `.${p.field}` : ''}`,
        p.message,
      );
    const assign = (rule as Record<string, unknown>)['Assign'];
    if (assign !== undefined) checkTemplate(assign, `Choices[${i}].Assign`, fail);
  });
}

/** Checks a Retry or Catch list (`jsonata`: a catcher has Output and Assign instead of ResultPath). */
export function checkErrorHandlers(state: AslState, field: string, fail: Fail, jsonata = false): void {
  const list = state[field];
  if (!Array.isArray(list)) fail('invalid', field, 'must be a list');
  (list as unknown[]).forEach((h, i) => {
    const at = `${field}[${i}]`;
    if (h === null || typeof h !== 'object') fail('invalid', at, 'must be an object');
    const o = h as Record<string, unknown>;
    if (!Array.isArray(o['ErrorEquals']) || o['ErrorEquals'].length === 0)
      fail('invalid', `${at}.ErrorEquals`, 'needs a non-empty list of error names');
    const keys =
      field === 'Retry'
        ? [
            'ErrorEquals',
            'IntervalSeconds',
            'MaxAttempts',
            'BackoffRate',
            'MaxDelaySeconds',
            'JitterStrategy',
            'Comment',
          ]
        : jsonata
          ? ['ErrorEquals', 'Next', 'Output', 'Assign', 'Comment']
          : ['ErrorEquals', 'Next', 'ResultPath', 'Assign', 'Comment'];
    for (const k of Object.keys(o))
      if (!keys.includes(k)) fail('invalid', `${at}.${k}`, `field ${k} is not allowed in ${field}`);
    if (field === 'Catch' && typeof o['Next'] !== 'string')
      fail('invalid', `${at}.Next`, 'a catcher needs Next');
    if (field === 'Catch' && o['ResultPath'] !== undefined && o['ResultPath'] !== null)
      checkPath(o['ResultPath'], `${at}.ResultPath`, fail);
    if (field === 'Catch' && o['Assign'] !== undefined && !jsonata)
      checkTemplate(o['Assign'], `${at}.Assign`, fail);
    if (o['JitterStrategy'] !== undefined && o['JitterStrategy'] !== 'FULL' && o['JitterStrategy'] !== 'NONE')
      fail('invalid', `${at}.JitterStrategy`, 'must be FULL or NONE');
  });
}
