import { composition } from '@stepfold/engine';

/**
 * The step kinds every runner, replay and migration of the CLI runs with: the CLI takes any
 * definition, child and map steps included, and walks the trees they start.
 */
export const CLI_KINDS = [composition] as const;
