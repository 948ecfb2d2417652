import { canonicalJson, sha256Hex } from '../content-hash.js';
import { type Issue, ValidationError } from '../errors.js';
import type * as z from '../mini-schema.js';
import { parseWith } from '../schema-kit.js';
import { analyzeGraph, type BranchRef } from './graph.js';
import { heartbeatIssues } from './heartbeat-check.js';
import { DEFINITION_KINDS, kindOf } from './kinds/index.js';
import { referenceIssues } from './references.js';
import {
  type DefinitionInput,
  definitionHeaderSchema,
  definitionSchema,
  type StepDefinition,
  type WorkflowDefinition,
} from './schema.js';
import { RESERVED_KEYS } from './step-fields.js';

/** A validated definition with what the reducer derives from it once. */
export interface CompiledWorkflow {
  definition: WorkflowDefinition;
  hash: string;
  /** Enclosing parallel branches of each step, outermost first. */
  regions: Map<string, BranchRef[]>;
  pivots: string[];
  /** Every signal name some step listens for: the names an instance of this definition accepts. */
  signals: ReadonlySet<string>;
}

const compiled = new WeakMap<object, CompiledWorkflow>();

function stepIssues(id: string, step: StepDefinition, defaultTimeoutMs: number | undefined): Issue[] {
  const at = `steps.${id}`;
  const out: Issue[] = [];
  if (step.id !== undefined && step.id !== id)
    out.push({ path: `${at}.id`, message: `id "${step.id}" differs from its key` });
  out.push(...(kindOf(step).issues?.(step, at) ?? []));
  out.push(...heartbeatIssues(step, at, defaultTimeoutMs));
  return out;
}

/**
 * Validates a definition and returns it in normal form (steps keyed by id, each with its id).
 * Throws `INVALID_DEFINITION` listing every problem found, not just the first.
 *
 * @example
 * const order = defineWorkflow(JSON.parse(readFileSync('order.json', 'utf8')));
 * // or inline: defineWorkflow({ name: 'order', version: 1, start: 'a', steps: { a: { kind: 'succeed' } } })
 */
export function defineWorkflow(input: DefinitionInput): WorkflowDefinition {
  return compileWorkflow(input).definition;
}

/** Validates and analyzes a definition once; later calls with the same object are free. */
export function compileWorkflow(input: DefinitionInput | WorkflowDefinition): CompiledWorkflow {
  const cached = compiled.get(input);
  if (cached) return cached;
  const parsed = { data: parseDefinition(input) };
  const issues: Issue[] = [];
  const steps: Record<string, StepDefinition & { id: string }> = {};
  const duplicates = new Set<string>();
  if (Array.isArray(parsed.data.steps)) {
    parsed.data.steps.forEach((s, i) => {
      if (!s.id) issues.push({ path: `steps.${i}.id`, message: 'steps given as a list need an id' });
      else if (Object.hasOwn(steps, s.id)) {
        issues.push({ path: `steps.${i}.id`, message: `duplicate step id "${s.id}"` });
        duplicates.add(s.id);
      } else steps[s.id] = { ...s, id: s.id };
    });
  } else {
    for (const [id, s] of Object.entries(parsed.data.steps)) steps[id] = { ...s, id };
  }
  const defaultTimeoutMs = parsed.data.defaults?.timeoutMs;
  for (const [id, s] of Object.entries(steps)) issues.push(...stepIssues(id, s, defaultTimeoutMs));
  // With two steps under one id the graph is not the one written: a cycle through the id (the
  // builder linked the step before the second copy to the first) would only echo the duplicate.
  const graph = analyzeGraph(parsed.data.start, steps, duplicates);
  issues.push(...graph.issues);
  if (graph.issues.length === 0 && duplicates.size === 0)
    issues.push(...referenceIssues(steps, graph.regions));
  if (issues.length) throw new ValidationError('INVALID_DEFINITION', 'invalid workflow definition', issues);

  const definition = deepFreeze({ ...parsed.data, steps }) as WorkflowDefinition;
  const result: CompiledWorkflow = {
    definition,
    hash: sha256Hex(canonicalJson(definition)),
    regions: graph.regions,
    pivots: Object.values(steps)
      .filter((s) => kindOf(s).pivot?.(s) === true)
      .map((s) => s.id),
    signals: new Set(Object.values(steps).flatMap((s) => kindOf(s).listensFor?.(s) ?? [])),
  };
  compiled.set(input, result);
  compiled.set(definition, result);
  return result;
}

/** Structural validation: the header, then each step on its own so every issue has a precise path. */
function parseDefinition(input: unknown): z.infer<typeof definitionSchema> {
  try {
    const reserved = reservedKeyIssues(input);
    const head = parseWith(definitionHeaderSchema, input);
    const issues: Issue[] = head.ok ? [] : [...head.issues];
    const raw = (input as { steps?: unknown } | null)?.steps;
    const entries: Array<[string, unknown]> =
      raw && typeof raw === 'object' ? Object.entries(raw as Record<string, unknown>) : [];
    issues.push(...reserved);
    for (const [key, step] of entries) {
      const kind = (step as { kind?: unknown } | null)?.kind;
      if (typeof kind !== 'string' || !Object.hasOwn(DEFINITION_KINDS, kind)) {
        issues.push({
          path: `steps.${key}.kind`,
          message: `unknown step kind ${JSON.stringify(kind)} (one of ${Object.keys(DEFINITION_KINDS).join(', ')})`,
        });
        continue;
      }
      const r = parseWith(DEFINITION_KINDS[kind as keyof typeof DEFINITION_KINDS].schema as z.Schema, step);
      if (!r.ok)
        issues.push(...r.issues.map((i) => ({ ...i, path: `steps.${key}${i.path ? `.${i.path}` : ''}` })));
    }
    if (issues.length) throw new ValidationError('INVALID_DEFINITION', 'invalid workflow definition', issues);
    const full = parseWith(definitionSchema, input);
    if (!full.ok) throw new ValidationError('INVALID_DEFINITION', 'invalid workflow definition', full.issues);
    return full.value;
  } catch (e) {
    // A definition is JSON: a JavaScript caller's reference cycle, or a nest deeper than any real
    // one, ran a recursive check out of stack: caught here rather than tracked on every walk.
    if (!(e instanceof RangeError)) throw e;
    throw new ValidationError('INVALID_DEFINITION', 'invalid workflow definition', [
      { path: '', message: 'a cycle, or nested too deep' },
    ]);
  }
}

/**
 * Keys that could reach a prototype, refused rather than dropped (a parse drops a `__proto__` key
 * silently, and an object literal turns one into the prototype): a `__proto__` key or a foreign
 * prototype anywhere in the definition, and a step id `constructor` or `prototype` in either form.
 */
function reservedKeyIssues(input: unknown): Issue[] {
  const out: Issue[] = [];
  const message = 'must not be __proto__, constructor or prototype';
  const walk = (v: unknown, path: string) => {
    if (typeof v !== 'object' || v === null) return;
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== Array.prototype && proto !== null) {
      out.push({ path: `${path}.__proto__`, message: 'has a __proto__ key (it set the prototype)' });
    }
    for (const [k, child] of Object.entries(v)) {
      const at = path ? `${path}.${k}` : k;
      if (k === '__proto__') out.push({ path: at, message: `key ${message}` });
      walk(child, at);
    }
  };
  walk(input, '');
  const steps = (input as { steps?: unknown } | null)?.steps;
  if (Array.isArray(steps)) {
    steps.forEach((s, i) => {
      const id = (s as { id?: unknown } | null)?.id;
      if (typeof id === 'string' && RESERVED_KEYS.has(id))
        out.push({ path: `steps.${i}.id`, message: `step id ${message}` });
    });
  } else if (typeof steps === 'object' && steps !== null) {
    for (const k of Object.keys(steps)) {
      if (k !== '__proto__' && RESERVED_KEYS.has(k))
        out.push({ path: `steps.${k}`, message: `step id ${message}` });
    }
  }
  return out;
}

/** The stable content hash of a definition (SHA-256 of its canonical JSON). */
export function definitionHash(definition: DefinitionInput | WorkflowDefinition): string {
  return compileWorkflow(definition).hash;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
