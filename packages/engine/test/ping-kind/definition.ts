import { defineKind } from '../../src/definition/kind.js';
import { integer, linkedFields, opt } from '../../src/definition/step-fields.js';

// A kind of the test's own, written as a built-in kind is (see src/definition/README.md, "Adding a
// step kind"): `ping` waits for `times` signals named `pong` (default 1) and completes with their count.

/** `ping`: its definition module, as `src/definition/kinds/<kind>.ts` would hold it. */
export const ping = defineKind(
  'ping',
  linkedFields,
  { times: opt(integer(1, 100)) },
  {
    waits: true,
    listensFor: () => 'pong',
  },
);
