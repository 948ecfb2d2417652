import { isDeepStrictEqual } from 'node:util';
import {
  composition,
  defineWorkflow,
  definitionHash,
  type Snapshot,
  step,
  type ValidationError,
  type WorkflowDefinition,
} from '@stepfold/engine';
import fc from 'fast-check';
import type { Target } from '../driver.js';
import { expect, jsonIssues, typedOrValue } from '../guard.js';
import { cyclic, mutate, mutationsArb, RESERVED } from '../hostile.js';
import { SEED_INPUTS, seedJson } from '../seeds.js';

/** Every kind a fuzzed definition may use. */
const KINDS = [composition];

// Definitions: the seeds mutated at random into defineWorkflow. The answer is a definition that
// starts (or refuses to start with a typed error) or INVALID_DEFINITION listing issues; a
// definition that kept a reserved key, a changed input object, any other throw, is a finding.

const reserved = new Set<string>(RESERVED);

/** Whether a path string (`input.a.b`) has a segment that could reach a prototype. */
const badPath = (v: unknown) => typeof v === 'string' && v.split('.').some((p) => reserved.has(p));

/**
 * Why the rules say `input` must be refused, or null: a `__proto__` key or a foreign prototype
 * anywhere, a reserved step id, a reserved key of a mapping, a data path through a reserved segment.
 */
export function mustRefuse(input: unknown): string | null {
  const seen = new Set<object>();
  const walk = (v: unknown, depth: number): string | null => {
    if (typeof v !== 'object' || v === null || seen.has(v) || depth > 200) return null;
    seen.add(v);
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== Array.prototype && proto !== null)
      return 'a foreign prototype';
    for (const [k, x] of Object.entries(v)) {
      if (k === '__proto__') return 'a __proto__ key';
      const r = walk(x, depth + 1);
      if (r) return r;
    }
    return null;
  };
  const anywhere = walk(input, 0);
  if (anywhere) return anywhere;
  const steps = (input as { steps?: unknown } | null)?.steps;
  if (typeof steps !== 'object' || steps === null) return null;
  const list: Array<[string, unknown]> = Array.isArray(steps)
    ? steps.map((s) => [String((s as { id?: unknown } | null)?.id), s])
    : Object.entries(steps);
  for (const [id, s] of list) {
    if (reserved.has(id)) return `step id ${id}`;
    if (typeof s !== 'object' || s === null) continue;
    const fields = s as Record<string, unknown>;
    for (const name of ['input', 'output'] as const) {
      const m = fields[name];
      if (badPath(m)) return `${id}.${name} path`;
      if (typeof m === 'object' && m !== null && !Array.isArray(m)) {
        for (const [k, p] of Object.entries(m)) {
          if (reserved.has(k)) return `${id}.${name} key ${k}`;
          if (badPath(p)) return `${id}.${name}.${k} path`;
        }
      }
    }
    if (badPath(fields['items'])) return `${id}.items path`;
  }
  return null;
}

/** Whether `v` is what JSON.parse of its text gives (no NaN, no class instance, no foreign prototype). */
export function isJson(v: unknown, text: string): boolean {
  try {
    return isDeepStrictEqual(JSON.parse(text), v);
  } catch {
    return false; // deeper than the comparison's stack
  }
}

/** A JSON text of `v` when it has one (cycles and deep nests do not), to see whether a call changed it. */
function textOf(v: unknown): string | undefined {
  try {
    return JSON.stringify(v);
  } catch {
    return undefined;
  }
}

/** A snapshot leaving the reducer must be JSON and must load again: stepped once more from a JSON copy. */
export function checkSnapshotOut(def: WorkflowDefinition, s: Snapshot, where: string, json = true): void {
  // From JSON in, JSON out; a JavaScript caller's NaN or class instance in a payload is its own to keep.
  const issues = json ? jsonIssues(s) : [];
  expect(issues.length === 0, () => `${where}: the snapshot is not JSON: ${issues.join(', ')}`);
  const copy = JSON.parse(JSON.stringify(s)) as Snapshot;
  const again = typedOrValue(
    () => step(def, copy, { type: 'tick', at: s.updatedAt }, { kinds: KINDS }),
    `${where}: reload`,
  );
  expect(
    again.ok,
    () => `${where}: its own snapshot does not load again: ${again.ok ? '' : again.error.message}`,
  );
}

type Input = { definition: unknown; input: number };

export const definitions: Target<Input, DefinitionSeeds> = {
  name: 'definitions',
  runs: 40_000,
  async open() {
    return { json: seedJson() };
  },
  arbitrary({ json }) {
    const mutated = fc
      .record({ seed: fc.nat(json.length - 1), mutations: mutationsArb(1, 4) })
      .map(({ seed, mutations }) => mutate(json[seed], mutations));
    const definition = fc.oneof(
      { weight: 12, arbitrary: mutated },
      { weight: 1, arbitrary: fc.anything({ maxDepth: 3 }) },
      // A JavaScript caller's object graph with a cycle in it (not JSON, still an input).
      {
        weight: 1,
        arbitrary: fc.nat(json.length - 1).map((i) => ({ ...(json[i] as object), description: cyclic() })),
      },
    );
    return fc.record({ definition, input: fc.nat(SEED_INPUTS.length - 1) });
  },
  check({ definition, input }) {
    const before = textOf(definition);
    const r = typedOrValue(() => defineWorkflow(definition as never), 'defineWorkflow');
    if (before !== undefined) expect(textOf(definition) === before, 'defineWorkflow changed its input');
    if (!r.ok) {
      const e = r.error as ValidationError;
      expect(e.code === 'INVALID_DEFINITION', () => `defineWorkflow threw ${e.code}, not INVALID_DEFINITION`);
      expect(Array.isArray(e.issues) && e.issues.length > 0, 'INVALID_DEFINITION without issues');
      for (const i of e.issues)
        expect(typeof i.path === 'string' && typeof i.message === 'string', 'a malformed issue');
      return;
    }
    const refuse = mustRefuse(definition);
    expect(refuse === null, () => `defineWorkflow accepted ${refuse}`);
    const def = r.value;
    // From JSON in, JSON out (a JavaScript caller's own -Infinity in a condition is its to keep).
    const issues = before !== undefined && isJson(definition, before) ? jsonIssues(def) : [];
    expect(issues.length === 0, () => `the definition is not JSON: ${issues.join(', ')}`);
    typedOrValue(() => definitionHash(def), 'definitionHash');
    const started = typedOrValue(
      () =>
        step(
          def,
          null,
          { type: 'start', at: 1_000, id: 'fz-1', input: SEED_INPUTS[input] },
          { kinds: KINDS },
        ),
      'start',
    );
    if (!started.ok) return;
    checkSnapshotOut(def, started.value, 'start');
    const later = typedOrValue(
      () => step(def, started.value, { type: 'tick', at: 10_000_000 }, { kinds: KINDS }),
      'tick',
    );
    if (later.ok) checkSnapshotOut(def, later.value, 'tick');
  },
};

interface DefinitionSeeds {
  json: unknown[];
}
