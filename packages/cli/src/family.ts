import type { ParentRef, Snapshot, Status, Store, WorkflowDefinition } from '@stepfold/engine';
import {
  type ChildRef,
  type ChildStepRef,
  childRefs,
  type MapStepRef,
  mapChildId,
  mapChildPrefix,
  mapProgressText,
} from '@stepfold/engine';

// What `show` says about an instance's family: the children it started (child steps, maps) and,
// for a child, its parent, with their statuses loaded from the store, so one can walk both ways.

/** A child step with its child instance's status (`missing`: not in the store, not started yet or deleted). */
export type ChildStepView = ChildStepRef & { childStatus: Status | 'missing' };

/** A child's parent with the parent's status. */
export type ParentView = ParentRef & { status: Status | 'missing' };

/** An instance's children and parent, as `show` reports them. */
export interface Family {
  children: Array<ChildStepView | MapStepRef>;
  parent?: ParentView | undefined;
}

/** Item indexes a line of `show` lists before it says how many more there are. */
const SHOWN_ITEMS = 20;

/**
 * The engine's {@link childRefs}; without the definition to say whether a map runs workflows, the
 * first item's instance is loaded and asked who its parent is (one load per such map).
 */
export async function findChildRefs(
  store: Store,
  s: Snapshot,
  def: WorkflowDefinition | undefined,
): Promise<ChildRef[]> {
  const refs = childRefs(def, s);
  return Promise.all(
    refs.map(async (ref) => {
      if (ref.kind !== 'map' || ref.prefix !== undefined || def !== undefined) return ref;
      if (ref.progress.pending === ref.progress.total) return ref; // nothing dispatched yet
      const prefix = mapChildPrefix(s, ref.step);
      const first = await store.load(mapChildId(prefix, 0));
      const mine = first?.parent?.id === s.id && first.parent.step === ref.step;
      return mine ? { ...ref, prefix } : ref;
    }),
  );
}

/** The instance's children (child steps' statuses loaded) and its parent (status loaded). */
export async function loadFamily(
  store: Store,
  s: Snapshot,
  def: WorkflowDefinition | undefined,
): Promise<Family> {
  const refs = await findChildRefs(store, s, def);
  const statusOf = async (id: string): Promise<Status | 'missing'> =>
    (await store.load(id))?.status ?? 'missing';
  const [children, parent] = await Promise.all([
    Promise.all(
      refs.map(async (ref) => (ref.kind === 'child' ? { ...ref, childStatus: await statusOf(ref.id) } : ref)),
    ),
    s.parent ? statusOf(s.parent.id).then((status) => ({ ...s.parent!, status })) : undefined,
  ]);
  return { children, ...(parent ? { parent } : {}) };
}

/** Up to {@link SHOWN_ITEMS} indexes, then how many more. */
function indexes(items: readonly number[]): string {
  const shown = items.slice(0, SHOWN_ITEMS).join(', ');
  return items.length > SHOWN_ITEMS ? `${shown}, … (${items.length} in all)` : shown;
}

/** The family as lines for `show`: the parent first (where this instance reports), then the children. */
export function renderFamily(s: Snapshot, f: Family): string[] {
  const out: string[] = [];
  if (f.parent) {
    const p = f.parent;
    const item = p.item === undefined ? '' : `, item ${p.item}`;
    const phase = p.phase === 'compensate' ? ', reverting' : '';
    out.push(`parent: ${p.id}  ${p.workflow}  step ${p.step}${item}${phase}  (${p.status})`);
  }
  if (!f.children.length) return out;
  if (out.length) out.push('');
  out.push('children:');
  for (const c of f.children) {
    if (c.kind === 'child') {
      const pivot = c.pivot ? '  past its pivot' : '';
      const what = c.workflow ? `child ${c.workflow}` : 'child';
      out.push(`  ${c.step}  ${what}  → ${c.id}  ${c.childStatus}${pivot}`);
      continue;
    }
    const what = c.workflow ? `map of ${c.workflow}` : c.prefix ? 'map of child workflows' : 'map';
    out.push(`  ${c.step}  ${what}  ${c.status}  ${mapProgressText(c.progress)}`);
    if (c.progress.pending) out.push(`    not started: ${c.progress.pending}`);
    if (c.progress.failed) out.push(`    failed items: ${indexes(c.progress.failedItems)}`);
    if (c.progress.running) out.push(`    running items: ${indexes(c.progress.runningItems)}`);
    if (c.prefix) {
      out.push(`    children: ${c.prefix}<item>  (list them: stepfold children ${s.id} --step ${c.step})`);
    }
  }
  return out;
}
