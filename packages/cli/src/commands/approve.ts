import type { Command } from 'commander';
import { registerDecision } from './decide.js';

/** `stepfold approve <id>`: sends `{ decision: 'approve' }` to the instance's waiting human step. */
export function register(program: Command): void {
  registerDecision(program, 'approve');
}
