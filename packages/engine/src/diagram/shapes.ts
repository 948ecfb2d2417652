import type { StepDefinition, StepKind, StepOf } from '../definition/schema.js';
import { conditionText, duration, escapeLabel } from './text.js';

/** The Mermaid shape of each step kind: the brackets around its label. */
export const KIND_SHAPES: Readonly<Record<StepKind, readonly [open: string, close: string]>> = {
  task: ['[', ']'],
  choice: ['{', '}'],
  parallel: ['{{', '}}'],
  wait: ['[/', '/]'],
  human: ['[/', '\\]'],
  sleep: ['(', ')'],
  collect: ['[(', ')]'],
  savepoint: ['[[', ']]'],
  continueAsNew: ['>', ']'],
  succeed: ['([', '])'],
  fail: ['[\\', '/]'],
};

/** What a step does, in a few words (the second line of its label), escaped. */
export function kindLine(step: StepDefinition): string {
  const e = (s: string) => escapeLabel(s);
  const timeout = (ms: number | undefined) => (ms === undefined ? '' : ` · timeout ${duration(ms)}`);
  switch (step.kind) {
    case 'task': {
      const flags = [
        ...(step.pivot ? ['pivot'] : []),
        ...(step.onFailure ? [`on failure: ${step.onFailure}`] : []),
      ];
      return `${e(`${step.handler}()`)}${flags.map((f) => ` · ${e(f)}`).join('')}`;
    }
    case 'choice':
      return 'choice';
    case 'parallel':
      return `parallel · ${joinText(step.join)}`;
    case 'wait':
      return `wait for ${e(step.signal)}${timeout(step.timeoutMs)}`;
    case 'human':
      return `human: ${e(step.signal ?? step.id ?? '')}${timeout(step.timeoutMs)}`;
    case 'sleep':
      return step.until === undefined ? `sleep ${duration(step.ms ?? 0)}` : `sleep until ${e(step.until)}`;
    case 'collect': {
      const parts = [
        ...(step.maxItems === undefined ? [] : [`max ${step.maxItems}`]),
        ...(step.idleMs === undefined ? [] : [`idle ${duration(step.idleMs)}`]),
        ...(step.maxWaitMs === undefined ? [] : [`max wait ${duration(step.maxWaitMs)}`]),
      ];
      return `collect ${e(step.signal)}${parts.map((p) => ` · ${p}`).join('')}`;
    }
    case 'savepoint':
      return 'savepoint';
    case 'continueAsNew':
      return 'continue as new';
    case 'succeed':
      return 'succeed';
    case 'fail':
      return step.error?.code === undefined ? 'fail' : `fail: ${e(step.error.code)}`;
  }
}

/** A parallel step's join rule in words: `join all`, `join any`, `join at least 2`. */
export function joinText(join: StepOf<'parallel'>['join']): string {
  if (join === undefined || join === 'all') return 'join all';
  if (join === 'any') return 'join any';
  return `join at least ${join.atLeast}`;
}

/** The label of a choice branch edge: its condition in short form, escaped. */
export function whenLabel(when: Parameters<typeof conditionText>[0]): string {
  return escapeLabel(conditionText(when));
}
