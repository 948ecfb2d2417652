import { defineKind } from '../kind.js';
import { linkedFields } from '../step-fields.js';

/** `savepoint`: a rollback after a failure stops here (a cancel still goes past it). */
export const savepoint = defineKind('savepoint', linkedFields, {});
