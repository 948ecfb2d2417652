import { composition, searchAttributes } from '@stepfold/engine';

/**
 * The step kinds every runner, replay and migration of the CLI runs with: the CLI takes any
 * definition, child and map steps and search attributes included, and walks the trees they start.
 */
export const CLI_KINDS = [composition, searchAttributes] as const;
