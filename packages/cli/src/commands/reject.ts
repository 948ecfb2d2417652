import type { Command } from 'commander';
import { registerDecision } from './decide.js';

/** `stepfold reject <id>`: sends `{ decision: 'reject' }`; the step fails with `REJECTED`. */
export function register(program: Command): void {
  registerDecision(program, 'reject');
}
