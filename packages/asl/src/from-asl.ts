import type { DefinitionInput } from '@stepfold/engine';
import { checkState, languageOf } from './checks.js';
import { AslImportError } from './errors.js';
import { hasTolerance } from './map-tolerance.js';
import {
  ASL_HANDLER,
  type AslMachine,
  type AslPlan,
  type AslScope,
  type AslState,
  type QueryLanguage,
  type StepPlan,
} from './plan.js';

// ASL → stepfold. Each ASL state becomes a task step run by the one ASL handler (which evaluates
// the state: its I/O pipeline, intrinsics, `$$`, variables, the Lambda call, Retry and Catch) and,
// where the state branches, a choice step on the route the handler wrote; Wait becomes a sleep,
// Parallel a parallel step, and an inline Map a map step over a workflow of its own per iteration.
// Step ids are the state names (characters a data path cannot hold become `_`); the steps a state
// adds carry a suffix after `:` (`Charge:route`).

/** Options of {@link fromAsl}. */
export interface FromAslOptions {
  /** The workflow's name (default `asl-machine`); Map iterations' workflows are named after it. */
  name?: string;
  /** The workflow's version (default 1). */
  version?: number;
}

/** What {@link fromAsl} makes: the workflow, the workflows of its Map iterations, and the handler's plan. */
export interface AslImport {
  /** The workflow, plain stepfold JSON (for `defineWorkflow`, the CLI, diagrams, migrations). */
  definition: DefinitionInput;
  /** One workflow per Map state (its iterations run as child instances): give them to the runner too. */
  workflows: DefinitionInput[];
  /** What the ASL handler evaluates at each generated step (see `aslHandlers`). */
  plan: AslPlan;
  /** The state machine imported. */
  machine: AslMachine;
}

type Step = Record<string, unknown> & { kind: string };

/** One workflow being generated: the machine's, or a Map's iterations'. */
interface Unit {
  name: string;
  steps: Record<string, Step>;
  /** Its first step, once its scope is compiled. */
  start?: string;
}

/**
 * Turns an Amazon States Language state machine into stepfold definitions. Refuses, with an
 * {@link AslImportError} naming the state and the field, what it cannot run exactly as AWS does.
 *
 * @example
 * const imported = fromAsl(JSON.parse(readFileSync('machine.json', 'utf8')), { name: 'orders' });
 * const order = defineWorkflow(imported.definition);
 * const handlers = aslHandlers(imported, { resources: { 'arn:aws:lambda:eu-west-1:1:function:charge': charge } });
 */
export function fromAsl(machine: unknown, options: FromAslOptions = {}): AslImport {
  const m = checkMachine(machine, '');
  const name = options.name ?? 'asl-machine';
  const version = options.version ?? 1;
  const plan: Record<string, StepPlan> = {};
  const units: Unit[] = [];
  const top = (m.QueryLanguage ?? 'JSONPath') as QueryLanguage;
  const build = (unitName: string, sub: AslMachine, prefix: string, path: string): Unit => {
    const unit: Unit = { name: unitName, steps: {} };
    units.push(unit);
    const scope: AslScope = { kind: prefix === '' ? 'top' : 'iteration', producers: [] };
    const start = compileScope(
      sub,
      scope,
      prefix,
      path,
      unit,
      plan,
      (mapId, iterator, statePath) => build(`${name}/${mapId}`, iterator, `${mapId}/`, statePath).name,
      top,
    );
    unit.start = start;
    return unit;
  };
  build(name, m, '', '');
  const defs = units.map(
    (u) =>
      ({
        name: u.name,
        version,
        start: u.start,
        onFailure: 'fail',
        defaults: { retry: { maxAttempts: 1 } },
        steps: u.steps,
      }) as unknown as DefinitionInput,
  );
  return { definition: defs[0]!, workflows: defs.slice(1), plan, machine: m };
}

function checkMachine(machine: unknown, at: string): AslMachine {
  const bad = (field: string, detail: string): never => {
    throw new AslImportError('invalid', at, field, detail);
  };
  if (machine === null || typeof machine !== 'object' || Array.isArray(machine))
    bad('', 'a state machine must be an object');
  const m = machine as Record<string, unknown>;
  if (
    m['QueryLanguage'] !== undefined &&
    m['QueryLanguage'] !== 'JSONPath' &&
    m['QueryLanguage'] !== 'JSONata'
  )
    bad('QueryLanguage', 'must be JSONPath or JSONata');
  if (m['TimeoutSeconds'] !== undefined)
    throw new AslImportError('unsupported', at, 'TimeoutSeconds', 'execution timeouts are not supported yet');
  for (const k of Object.keys(m))
    if (!['StartAt', 'States', 'Comment', 'Version', 'QueryLanguage', 'ProcessorConfig'].includes(k))
      bad(k, `field ${k} is not allowed here`);
  if (typeof m['StartAt'] !== 'string') bad('StartAt', 'needs StartAt');
  const states = m['States'];
  if (states === null || typeof states !== 'object' || Array.isArray(states)) bad('States', 'needs States');
  if (!Object.hasOwn(states as object, m['StartAt'] as string))
    bad('StartAt', `no state ${JSON.stringify(m['StartAt'])}`);
  return m as unknown as AslMachine;
}

/** Characters kept in step ids: those of stepfold ids except `.` (data paths), `:` and `/` (ours). */
function sanitize(name: string): string {
  const s = name.replace(/[^A-Za-z0-9_@+=-]/g, '_').slice(0, 120) || '_';
  return ['constructor', 'prototype', '__proto__'].includes(s) ? `${s}_` : s;
}

/** Compiles one scope's states into `unit`; returns the id of its first step. */
function compileScope(
  sub: AslMachine,
  scope: AslScope,
  prefix: string,
  path: string,
  unit: Unit,
  plan: Record<string, StepPlan>,
  iteration: (mapId: string, iterator: AslMachine, statePath: string) => string,
  language: QueryLanguage,
): string {
  const names = Object.keys(sub.States);
  const ids = new Map<string, string>();
  const taken = new Set<string>();
  for (const n of names) {
    let id = `${prefix}${sanitize(n)}`;
    for (let i = 2; taken.has(id); i++) id = `${prefix}${sanitize(n)}_${i}`;
    taken.add(id);
    ids.set(n, id);
  }
  const at = (n: string) => (path ? `${path}/${n}` : n);
  const back = backEdges(sub);
  const target = (from: string, to: string, field: string): string => {
    if (!Object.hasOwn(sub.States, to))
      throw new AslImportError('invalid', at(from), field, `no state ${JSON.stringify(to)}`);
    const id = ids.get(to)!;
    if (!back.has(`${from}\u0000${to}`)) return id;
    // A loop of steps that never wait is refused by stepfold; a zero timer lets each round settle.
    unit.steps[`${id}:loop`] = { kind: 'sleep', ms: 0, next: id, description: `loop back to ${to}` };
    return `${id}:loop`;
  };
  const end = (id: string, name: string): string => {
    const endId = `${id}:end`;
    unit.steps[endId] =
      scope.kind === 'top'
        ? { kind: 'succeed', output: `outputs.${id}.value`, description: `${name} ends the execution` }
        : scope.kind === 'iteration'
          ? { kind: 'succeed', output: `outputs.${id}`, description: `${name} ends the iteration` }
          : { kind: 'succeed', description: `${name} ends the branch` };
    return endId;
  };
  for (const n of names) {
    const state = sub.States[n]!;
    const lang = languageOf(state, language, at(n));
    checkState(state, at(n), lang);
    const id = ids.get(n)!;
    const task = (stepId: string, p: StepPlan, next: string | undefined, description = n): void => {
      unit.steps[stepId] = { kind: 'task', handler: ASL_HANDLER, description, ...(next ? { next } : {}) };
      plan[stepId] = lang === 'JSONata' ? { ...p, jsonata: true } : p;
    };
    // Where the state goes on to; `source` is the step whose output is the state's output.
    const onward = (source = id): string =>
      state['End'] === true ? end(source, n) : target(n, state['Next'] as string, 'Next');
    // The step that writes the route (a Map's or Parallel's second half, or the state's own), and
    // the routes: on, retry (a Task passes its attempt on through `again`), each catcher, error.
    const routed = (router: string): string | undefined => {
      const retry = Array.isArray(state['Retry']) && state['Retry'].length > 0;
      const catchers = (Array.isArray(state['Catch']) ? state['Catch'] : []) as Array<
        Record<string, unknown>
      >;
      // At the top an uncaught error fails the execution from the handler; deeper it ends the
      // branch or iteration with the error in its output, for the Parallel or Map to raise.
      if (!retry && catchers.length === 0 && (scope.kind === 'top' || state['End'] === true))
        return onward(router);
      const branches: Array<{ when: unknown; next: string }> = [];
      const when = (route: string) => ({ '==': [{ var: `outputs.${router}.route` }, route] });
      branches.push({ when: when('next'), next: onward(router) });
      if (retry) {
        const again = router === id ? `${id}:again` : id;
        unit.steps[`${id}:retry`] = {
          kind: 'sleep',
          until: `outputs.${router}.until`,
          next: again,
          description: `${n} waits before its next attempt`,
        };
        if (router === id) {
          scope.producers.push(again);
          task(again, { role: 'again', name: n, state, scope, of: id }, id, `${n}: next attempt`);
        }
        branches.push({ when: when('retry'), next: `${id}:retry` });
      }
      catchers.forEach((c, i) =>
        branches.push({ when: when(`catch:${i}`), next: target(n, c['Next'] as string, `Catch[${i}].Next`) }),
      );
      if (scope.kind !== 'top') branches.push({ when: when('error'), next: end(router, n) });
      unit.steps[`${router}:route`] = { kind: 'choice', branches, description: `${n}: where to go on` };
      return `${router}:route`;
    };
    const retries = Array.isArray(state['Retry']) && state['Retry'].length > 0;
    scope.producers.push(id);
    switch (state.Type) {
      case 'Pass':
      case 'Succeed':
        task(
          id,
          { role: 'state', name: n, state, scope, decider: id },
          state.Type === 'Succeed' ? end(id, n) : onward(),
        );
        break;
      case 'Fail':
        // At the top the handler raises the error; deeper the output carries it to the Parallel or Map.
        task(
          id,
          { role: 'state', name: n, state, scope, decider: id },
          scope.kind === 'top' ? undefined : end(id, n),
        );
        break;
      case 'Task':
        task(id, { role: 'state', name: n, state, scope, decider: retries ? `${id}:again` : id }, routed(id));
        break;
      case 'Choice': {
        const rules = state['Choices'] as Array<Record<string, unknown>>;
        const when = (route: string) => ({ '==': [{ var: `outputs.${id}.route` }, route] });
        const branches = rules.map((r, i) => ({
          when: when(`rule:${i}`),
          next: target(n, r['Next'] as string, `Choices[${i}].Next`),
        }));
        if (typeof state['Default'] === 'string')
          branches.push({ when: when('default'), next: target(n, state['Default'], 'Default') });
        if (scope.kind !== 'top') branches.push({ when: when('error'), next: end(id, n) });
        unit.steps[`${id}:route`] = {
          kind: 'choice',
          branches,
          description: `${n}: the first rule that holds`,
        };
        task(id, { role: 'state', name: n, state, scope, decider: id }, `${id}:route`);
        break;
      }
      case 'Wait': {
        const ms =
          typeof state['Seconds'] === 'number' ? Math.max(0, Math.round(state['Seconds'] * 1000)) : undefined;
        unit.steps[`${id}:wait`] = {
          kind: 'sleep',
          ...(ms === undefined ? { until: `outputs.${id}.until` } : { ms }),
          next: onward(),
          description: `${n} waits`,
        };
        task(id, { role: 'state', name: n, state, scope, decider: id }, `${id}:wait`);
        break;
      }
      case 'Map': {
        const iterator = (state['ItemProcessor'] ?? state['Iterator']) as AslMachine;
        checkMachine(iterator, at(n));
        const workflow = iteration(id, iterator, at(n));
        const after = `${id}:after`;
        const max =
          typeof state['MaxConcurrency'] === 'number' && state['MaxConcurrency'] > 0
            ? Math.min(state['MaxConcurrency'], 10_000)
            : 10_000;
        unit.steps[`${id}:map`] = {
          kind: 'map',
          items: `outputs.${id}.items`,
          workflow,
          maxConcurrency: max,
          // Without a tolerance the first failed iteration fails the Map: none starts after it.
          ...(hasTolerance(state) ? {} : { until: { exists: 'result.error' } }),
          results: 'collect',
          offload: false,
          next: after,
          description: `${n}: one iteration per item`,
        };
        task(id, { role: 'state', name: n, state, scope, decider: after }, `${id}:map`);
        scope.producers.push(after);
        task(
          after,
          { role: 'after', name: n, state, scope, first: id, map: `${id}:map` },
          routed(after),
          `${n}: results`,
        );
        break;
      }
      case 'Parallel': {
        const list = state['Branches'];
        if (!Array.isArray(list) || list.length === 0)
          throw new AslImportError('invalid', at(n), 'Branches', 'needs a non-empty list');
        const after = `${id}:after`;
        const scopes: AslScope[] = [];
        const entries = (list as unknown[]).map((b, i) => {
          const branch = checkMachine(b, `${at(n)}.Branches[${i}]`);
          const inner: AslScope = { kind: 'branch', producers: [], entry: id };
          scopes.push(inner);
          return compileScope(branch, inner, `${id}/${i}/`, `${at(n)}/${i}`, unit, plan, iteration, language);
        });
        unit.steps[`${id}:par`] = {
          kind: 'parallel',
          branches: entries,
          next: after,
          description: `${n}: its branches`,
        };
        task(id, { role: 'state', name: n, state, scope, decider: after }, `${id}:par`);
        scope.producers.push(after);
        task(
          after,
          { role: 'after', name: n, state, scope, first: id, branches: scopes },
          routed(after),
          `${n}: results`,
        );
        break;
      }
    }
  }
  return ids.get(sub.StartAt)!;
}

/** The edges `from\0to` that close a loop (depth-first from StartAt), by Next, Choices, Default and Catch. */
function backEdges(sub: AslMachine): Set<string> {
  const out = new Set<string>();
  const color = new Map<string, 1 | 2>();
  const succ = (n: string): string[] => {
    const s = sub.States[n];
    if (!s) return [];
    const list: string[] = [];
    if (typeof s['Next'] === 'string') list.push(s['Next']);
    if (typeof s['Default'] === 'string') list.push(s['Default']);
    for (const r of (Array.isArray(s['Choices']) ? s['Choices'] : []) as Array<{ Next?: unknown }>)
      if (typeof r.Next === 'string') list.push(r.Next);
    for (const c of (Array.isArray(s['Catch']) ? s['Catch'] : []) as Array<{ Next?: unknown }>)
      if (typeof c.Next === 'string') list.push(c.Next);
    return list;
  };
  const visit = (n: string) => {
    color.set(n, 1);
    for (const t of succ(n)) {
      if (color.get(t) === 1) out.add(`${n}\u0000${t}`);
      else if (!color.has(t)) visit(t);
    }
    color.set(n, 2);
  };
  visit(sub.StartAt);
  for (const n of Object.keys(sub.States)) if (!color.has(n)) visit(n);
  return out;
}

export type { AslState };
