import type { Issue } from '../../errors.js';
import * as z from '../../mini-schema.js';
import { defineKind } from '../kind.js';
import { integer, linkedFields, millis, opt, pathString, stepId } from '../step-fields.js';

/**
 * `collect`: batches a signal's payloads until `maxItems`, `idleMs` of quiet, or `maxWaitMs`. With
 * `drain: true` it never waits: it completes on entry with the payloads buffered for it (none, an
 * empty batch; at most `maxItems`), the ones that arrived while the instance was elsewhere.
 */
export const collect = defineKind(
  'collect',
  linkedFields,
  {
    signal: stepId,
    maxItems: opt(integer(1, 10_000)),
    idleMs: opt(millis(1)),
    maxWaitMs: opt(millis(1)),
    dedupeBy: opt(pathString),
    drain: opt(z.boolean()),
  },
  {
    waits: true,
    listensFor: (step) => step.signal,
    issues: (step, at) => {
      const out: Issue[] = [];
      if (step.drain === true) {
        if (step.idleMs !== undefined || step.maxWaitMs !== undefined) {
          out.push({
            path: `${at}.drain`,
            message: 'a draining collect does not wait: no idleMs or maxWaitMs',
          });
        }
      } else if (step.maxItems === undefined && step.idleMs === undefined && step.maxWaitMs === undefined) {
        out.push({
          path: at,
          message: 'collect needs at least one of maxItems, idleMs or maxWaitMs (or drain)',
        });
      }
      if (step.dedupeBy !== undefined && !/^payload(\.|$)/.test(step.dedupeBy)) {
        out.push({ path: `${at}.dedupeBy`, message: 'dedupeBy must be a path starting with payload' });
      }
      return out;
    },
  },
);
