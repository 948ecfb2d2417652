// Kept out of errors.ts (the main entry): only this entry raises it; its code is in ERROR_KINDS.

import { StepfoldError } from '../errors.js';

/**
 * A migration refused to move an instance: each reason names what has no place in the target
 * version (a step it sits in, a task in flight, a pending signal). Nothing was written.
 */
export class MigrationRefusedError extends StepfoldError<'MIGRATION_REFUSED'> {
  constructor(
    readonly id: string,
    readonly reasons: readonly string[],
  ) {
    super(
      'MIGRATION_REFUSED',
      `instance ${JSON.stringify(id)} cannot move:\n${reasons.map((r) => `  - ${r}`).join('\n')}`,
      { retryable: false },
    );
  }
}
