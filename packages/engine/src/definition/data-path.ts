import { PAYLOAD_REF, type PayloadRef } from '../payload-ref.js';

/** Path segments that could reach an object's prototype; refused everywhere. */
const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);

/** Roots a data path may start from. */
export const PATH_ROOTS = ['input', 'outputs'] as const;

/** Problems with a dotted data path such as `input.order.id` or `outputs.reserve.sku`; empty if fine. */
export function pathIssues(path: string): string[] {
  const parts = path.split('.');
  const problems: string[] = [];
  if (!(PATH_ROOTS as readonly string[]).includes(parts[0]!)) {
    problems.push(`path "${path}" must start with ${PATH_ROOTS.join(' or ')}`);
  }
  if (parts.some((p) => p === '')) problems.push(`path "${path}" has an empty segment`);
  if (parts.some((p) => FORBIDDEN.has(p))) problems.push(`path "${path}" uses a reserved segment`);
  return problems;
}

/**
 * Reads a dotted path from plain JSON data, own properties only; undefined when absent. A path
 * into an offloaded value (a payload reference) reads the fields its step kept inline (`keep`) and
 * nothing else: the reducer never sees a payload's body.
 */
export function readPath(root: unknown, path: string): unknown {
  let cur: unknown = root;
  for (const part of segments(path)) {
    if (cur === null || typeof cur !== 'object' || FORBIDDEN.has(part)) return undefined;
    if ((cur as { $ref?: unknown }).$ref === PAYLOAD_REF) cur = (cur as PayloadRef).keep ?? {};
    if (!Object.hasOwn(cur as object, part)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** Split paths by text: a definition's paths are read on every event that evaluates them. */
const SPLIT = new Map<string, readonly string[]>();

function segments(path: string): readonly string[] {
  let parts = SPLIT.get(path);
  if (parts === undefined) {
    // Bounded: paths built at run time (never a definition's) would otherwise pile up.
    if (SPLIT.size >= 4096) SPLIT.clear();
    parts = path.split('.');
    SPLIT.set(path, parts);
  }
  return parts;
}

/** Builds a value from a mapping: a path, or an object whose values are paths. */
export function mapData(root: unknown, mapping: string | Record<string, string>): unknown {
  if (typeof mapping === 'string') return readPath(root, mapping);
  const out: Record<string, unknown> = {};
  for (const [key, path] of Object.entries(mapping)) {
    // defineProperty, not assignment, so no key can reach a prototype.
    Object.defineProperty(out, key, {
      value: readPath(root, path),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}
