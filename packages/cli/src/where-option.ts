import {
  addWhere,
  isStepfoldError,
  type ListOrder,
  parseListOrder,
  type WhereCondition,
} from '@stepfold/engine';
import { InvalidArgumentError } from 'commander';

// `stepfold list --where` and `--order-by`: the engine reads the text (the inspector's filter bar
// reads it the same way); a condition it refuses is commander's usage error, not a stack trace.

/** Runs a parse, turning its `INVALID_QUERY` into commander's argument error (exit 2 with usage). */
function asArgument<T>(parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    if (isStepfoldError(e, 'INVALID_QUERY'))
      throw new InvalidArgumentError(e.issues[0]?.message ?? e.message);
    throw e;
  }
}

/** Parses one `--where` and adds it to the conditions gathered so far (repeated names combine). */
export function whereOf(
  value: string,
  previous: Record<string, WhereCondition> = {},
): Record<string, WhereCondition> {
  return asArgument(() => addWhere(value, previous));
}

/** Parses `--order-by`: a field (an attribute or `id`), `-field` for descending. */
export function orderOf(value: string): ListOrder {
  return asArgument(() => parseListOrder(value));
}
