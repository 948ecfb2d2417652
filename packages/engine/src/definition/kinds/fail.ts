import * as z from '../../mini-schema.js';
import { defineKind } from '../kind.js';
import { endFields, opt, text } from '../step-fields.js';

/** `fail`: fails the workflow with the given error (rolled back unless a pivot has passed). */
export const fail = defineKind('fail', endFields, {
  error: opt(z.strictObject({ message: text(1, 2000), code: opt(text(1, 200)) })),
});
