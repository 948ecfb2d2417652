import type { DefinitionKind } from '../definition/kind.js';
import type { StepDefinition } from '../definition/schema.js';
import { kindNotLoaded } from './kind-table.js';
import type { ByKind, Flow, StepRules } from './kinds/step-rules.js';
import { finish, log, spend, stepDef, stepState, terminate } from './transition-context.js';

// How cursors move, whatever the kind: entering a step, leaving it, ending a path, handing it a
// signal. What a step does at each point is its kind's rule (`kinds/<kind>.ts`), which gets this
// flow as an argument: the kinds never import this module.

type Step = StepDefinition & { id: string };

/**
 * The flow over the given tables of kinds (`kind-sets.ts` builds one per set of kinds passed).
 * Each table holds a kind's module typed by its own step; the flow hands it a step of that kind.
 */
export function createFlow(
  definitions: ByKind<Pick<DefinitionKind<string, never>, 'listensFor'>>,
  rules: ByKind<StepRules<never>>,
): Flow {
  const self: Flow = {
    enter(cx, id) {
      spend(cx);
      const def = stepDef(cx, id);
      const prev = cx.s.steps[id];
      cx.s.steps[id] = {
        status: 'active',
        iteration: (prev?.iteration ?? 0) + 1,
        attempt: 0,
        startedAt: cx.at,
      };
      cx.s.active.push(id);
      log(cx, 'step.started', id);
      const kind = rules[def.kind] as StepRules<Step> | undefined;
      if (!kind) throw kindNotLoaded(def.kind, cx.wf.definition.name);
      kind.enter(cx, def, self);
      // A step that listens for a signal gets the buffered ones with its name, while it stays active.
      const name = (definitions[def.kind] as DefinitionKind<string, Step>).listensFor?.(def);
      if (name === undefined) return;
      for (let i = 0; i < cx.s.inbox.length; ) {
        if (cx.s.steps[id]?.status !== 'active') return;
        const sig = cx.s.inbox[i]!;
        if (sig.name !== name) {
          i++;
          continue;
        }
        cx.s.inbox.splice(i, 1);
        self.deliverSignal(cx, id, sig);
      }
      if (cx.s.steps[id]?.status === 'active') kind.entered?.(cx, def, self);
    },

    complete(cx, id, output) {
      finish(cx, id, 'completed', output);
      const def = stepDef(cx, id);
      const next = 'next' in def ? def.next : undefined;
      if (next !== undefined) self.enter(cx, next);
      else self.endPath(cx, id, stepState(cx, id).output);
    },

    endPath(cx, id, output) {
      const chain = cx.wf.regions.get(id) ?? [];
      const inner = chain[chain.length - 1];
      if (!inner) {
        cx.s.output = output;
        terminate(cx, 'completed');
        return;
      }
      const owner = stepDef(cx, inner.parallel);
      (rules[owner.kind] as StepRules<Step>).branchEnded?.(cx, owner, inner.branch, output, self);
    },

    deliverSignal(cx, id, sig) {
      const def = stepDef(cx, id);
      log(cx, 'signal.received', id); // the name is the one the step listens for
      (rules[def.kind] as StepRules<Step>).signal?.(cx, def, sig, self);
    },
  };
  return self;
}
