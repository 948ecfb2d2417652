import { checkState, languageOf } from './checks.js';
import { AslImportError } from './errors.js';
import { fromAsl } from './from-asl.js';
import type { AslState, QueryLanguage } from './plan.js';

// `fromAsl` stops at the first thing it refuses; a user moving a state machine wants the whole
// list at once. This walks every state, Parallel branches and Map iterations included, and keeps
// the first problem of each.

/**
 * Everything `fromAsl` would refuse in a state machine: the first problem of each state (and of the
 * machine itself), as {@link AslImportError}s naming the state and the field. Empty when it imports.
 *
 * @example
 * for (const p of aslProblems(machine)) console.log(`${p.state} ${p.field}: ${p.issues[0]?.message}`);
 */
export function aslProblems(machine: unknown): AslImportError[] {
  let first: AslImportError;
  try {
    fromAsl(machine);
    return [];
  } catch (e) {
    if (!(e instanceof AslImportError)) throw e;
    first = e;
  }
  const found: AslImportError[] = [];
  const walk = (m: unknown, at: string, language: QueryLanguage) => {
    if (m === null || typeof m !== 'object') return;
    const states = (m as { States?: unknown }).States;
    if (states === null || typeof states !== 'object') return;
    for (const [name, state] of Object.entries(states as Record<string, AslState>)) {
      const path = at ? `${at}/${name}` : name;
      let lang = language;
      try {
        lang = languageOf(state, language, path);
        checkState(state, path, lang);
      } catch (e) {
        if (!(e instanceof AslImportError)) throw e;
        found.push(e);
      }
      if (state === null || typeof state !== 'object') continue;
      const branches = state['Branches'];
      if (Array.isArray(branches)) branches.forEach((b, i) => walk(b, `${path}/${i}`, lang));
      const inner = state['ItemProcessor'] ?? state['Iterator'];
      if (inner !== undefined) walk(inner, path, lang);
    }
  };
  const top = (machine as { QueryLanguage?: unknown } | null)?.QueryLanguage;
  walk(machine, '', top === 'JSONata' ? 'JSONata' : 'JSONPath');
  // A problem of the machine itself (or one only the whole import sees) comes first.
  if (!found.some((p) => p.state === first.state && p.field === first.field)) found.unshift(first);
  return found;
}
