import {
  type AnyDefinition,
  assertValidId,
  composition,
  createRunner,
  type HandleResult,
  pendingDecisions,
  type RunnerMessage,
  type Snapshot,
  type Store,
  searchAttributes,
  ValidationError,
  VersionConflictError,
} from '@stepfold/engine';
import type { IndexedDefinition } from './definitions.js';
import { checkPayload } from './payload-schema.js';

/** The actions the instance page's forms post to (`POST <base>/instances/<id>/<action>`). */
export const ACTIONS = ['decide', 'signal', 'cancel', 'abort', 'requeue'] as const;
/** One of {@link ACTIONS}. */
export type ActionName = (typeof ACTIONS)[number];

/** A form field as `parseBody` gives it: only strings are read, anything else counts as empty. */
type Field = unknown;

function text(form: Record<string, Field>, name: string): string {
  const v = form[name];
  return typeof v === 'string' ? v.trim() : '';
}

function bad(path: string, message: string): never {
  throw new ValidationError('INVALID_EVENT', message, [{ path, message }]);
}

/** A JSON textarea: empty means absent; anything else must parse (and be an object when `object`). */
function jsonField(form: Record<string, Field>, name: string, o: { object: boolean }): unknown {
  const raw = text(form, name);
  if (raw === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (e) {
    bad(name, `${name} is not valid JSON: ${(e as Error).message}`);
  }
  if (o.object && (typeof value !== 'object' || value === null || Array.isArray(value))) {
    bad(name, `${name} must be a JSON object`);
  }
  return value;
}

/** The page version a form was rendered from; a form without one is refused rather than guessed. */
export function formVersion(form: Record<string, Field>): number {
  const v = Number(text(form, 'version'));
  if (!Number.isSafeInteger(v) || v < 1)
    bad('version', 'the form carries no valid snapshot version; reload the page');
  return v;
}

/** A reason with the acting user appended, so the stored reason says who: `"duplicate (by ada)"`. */
function withActor(reason: string, user: string | undefined): string {
  if (!user) return reason;
  return reason ? `${reason} (by ${user})` : `by ${user}`;
}

/**
 * The runner message an action's form describes, and a line for the flash message. Decisions go
 * only to a human step that is active in the snapshot the user saw, and record the approver: the
 * signed-in `user` when the inspector knows one, else what was typed in the form. A signal's
 * payload is checked against the schema its definition declares before anything is sent.
 */
export async function messageFor(
  action: ActionName,
  s: Snapshot,
  def: IndexedDefinition,
  form: Record<string, Field>,
  user: string | undefined,
): Promise<{ message: RunnerMessage; label: string }> {
  const id = s.id;
  const reason = withActor(text(form, 'reason'), user);
  switch (action) {
    case 'decide': {
      const step = text(form, 'step');
      const pending = pendingDecisions(def.def, s).find((d) => d.step === step);
      if (!pending) bad('step', `${s.id} is not waiting for a decision at step ${JSON.stringify(step)}`);
      const decision = text(form, 'decision');
      if (decision !== 'approve' && decision !== 'reject')
        bad('decision', 'decision must be approve or reject');
      const by = user ?? text(form, 'by');
      const comment = text(form, 'comment');
      const payload = {
        decision,
        ...(by ? { by } : {}),
        // The CLI's reject sends `reason`; an approval's note is a `comment`.
        ...(comment ? (decision === 'reject' ? { reason: comment } : { comment }) : {}),
      };
      return {
        message: { type: 'signal', id, name: pending.signal, payload },
        label: `${decision === 'approve' ? 'approved' : 'rejected'} ${step}`,
      };
    }
    case 'signal': {
      const name = text(form, 'name');
      assertValidId(name, 'signal name');
      const payload = jsonField(form, 'payload', { object: false });
      const declared = def.signals.find((d) => d.name === name);
      // A decision sent as a raw signal would skip the approver: decisions go through `decide`.
      if (declared?.decision)
        bad(
          'name',
          `signal ${name} carries a human decision: use the Approve/Reject form, which records who decided`,
        );
      if (declared?.schema) await checkPayload(name, declared.schema, payload);
      return {
        message: { type: 'signal', id, name, ...(payload === undefined ? {} : { payload }) },
        label: `signal ${name} sent`,
      };
    }
    case 'cancel':
    case 'abort':
      return {
        message: { type: action, id, ...(reason ? { reason } : {}) },
        label: action === 'cancel' ? 'cancelled' : 'aborted',
      };
    case 'requeue': {
      const step = text(form, 'step');
      if (step) assertValidId(step, 'step');
      const inputPatch = jsonField(form, 'patch', { object: true }) as Record<string, unknown> | undefined;
      return {
        message: { type: 'requeue', id, ...(step ? { step } : {}), ...(inputPatch ? { inputPatch } : {}) },
        label: `requeued${step ? ` ${step}` : ''}${inputPatch ? ' with an input patch' : ''}`,
      };
    }
  }
}

/**
 * The store as a runner sees it for one action: every save must be conditional on exactly the
 * version the user's page showed. With the runner's conflict retries at 0, an instance that moved
 * on — even between the version check and the write — ends in VERSION_CONFLICT, never in an
 * event applied to a state nobody looked at.
 */
function pinnedStore(store: Store, version: number): Store {
  return {
    get maxSnapshotBytes() {
      return store.maxSnapshotBytes;
    },
    setup: () => store.setup(),
    create: (s) => store.create(s),
    load: (id) => store.load(id),
    save: async (s, expected) => {
      if (expected !== version) throw new VersionConflictError(s.id, version, expected);
      await store.save(s, expected);
    },
    listDue: (now, limit, query) => store.listDue(now, limit, query),
    list: (q) => store.list(q),
    delete: (id) => store.delete(id),
    // The user's store stays open: the inspector never closes what it was given.
    close: async () => {},
  };
}

/**
 * Writes one event through a hand-off runner (`execute: false`: no handlers needed, the tasks it
 * dispatches are queued in the snapshot for the user's workers), pinned to `version`.
 */
export function sendPinned(
  store: Store,
  workflows: readonly AnyDefinition[],
  message: RunnerMessage,
  version: number,
): Promise<HandleResult> {
  const runner = createRunner({
    store: pinnedStore(store, version),
    // The host's own objects: a builder's declared schemas are found by them, so the runner checks too.
    workflows,
    execute: false,
    conflictRetries: 0,
    // The inspector steers workflows with child and map steps too (and walks their trees), and
    // keeps the search attributes of those that declare them.
    kinds: [composition, searchAttributes],
  });
  return runner.handle({ ...message, wait: 'write' });
}
