import type { ParentRef, Snapshot, Status, Store, WorkflowDefinition } from '@stepfold/engine';
import { type ChildStepRef, childRefs, type MapStepRef, mapChildId, mapChildPrefix } from '@stepfold/engine';

// The instance page's family: the parent a child reports to, and the children a parent started,
// with the statuses the page shows loaded from the store. A page load stays bounded whatever a
// map's size: only the items worth a look (failed, running) are loaded, at most ITEM_LINKS of each.

/** Items of each kind (failed, running) a map lists with links and loaded statuses. */
export const ITEM_LINKS = 20;

/** A status read from the store; `missing` when the instance is not there (not started, or deleted). */
export type LoadedStatus = Status | 'missing';

/** A child step and its child's status. */
export type ChildStepView = ChildStepRef & { childStatus: LoadedStatus };

/** One listed item of a map: its index, and its child's id and status for a map of workflows. */
export interface MapItemView {
  index: number;
  id?: string | undefined;
  status?: LoadedStatus | undefined;
}

/** A map step with its failed and running items (the first {@link ITEM_LINKS} of each). */
export type MapStepView = MapStepRef & { failedShown: MapItemView[]; runningShown: MapItemView[] };

/** An instance's parent and children as the page shows them. */
export interface Family {
  parent?: (ParentRef & { status: LoadedStatus }) | undefined;
  children: Array<ChildStepView | MapStepView>;
}

/** Child instance statuses by id, for the diagram and the step labels (`missing` ones left out). */
export function childStatuses(f: Family): Record<string, Status> {
  const out: Record<string, Status> = {};
  for (const c of f.children)
    if (c.kind === 'child' && c.childStatus !== 'missing') out[c.id] = c.childStatus;
  return out;
}

/**
 * Reads the family of `s`: its parent's status, each child step's child status, and for each map
 * the statuses of its first failed and running items. Without the definition, a map whose snapshot
 * does not say where its children are is asked through its first item (does it name this parent?).
 */
export async function loadFamily(
  store: Store,
  s: Snapshot,
  def: WorkflowDefinition | undefined,
): Promise<Family> {
  const statusOf = async (id: string): Promise<LoadedStatus> => (await store.load(id))?.status ?? 'missing';
  const items = (prefix: string | undefined, indexes: readonly number[]) =>
    Promise.all(
      indexes.slice(0, ITEM_LINKS).map(async (index): Promise<MapItemView> => {
        if (prefix === undefined) return { index };
        const id = mapChildId(prefix, index);
        return { index, id, status: await statusOf(id) };
      }),
    );
  const children = await Promise.all(
    childRefs(def, s).map(async (ref): Promise<ChildStepView | MapStepView> => {
      if (ref.kind === 'child') return { ...ref, childStatus: await statusOf(ref.id) };
      const prefix = ref.prefix ?? (def === undefined ? await probe(store, s, ref) : undefined);
      const [failedShown, runningShown] = await Promise.all([
        items(prefix, ref.progress.failedItems),
        items(prefix, ref.progress.runningItems),
      ]);
      return { ...ref, ...(prefix === undefined ? {} : { prefix }), failedShown, runningShown };
    }),
  );
  const parent = s.parent ? { ...s.parent, status: await statusOf(s.parent.id) } : undefined;
  return { children, ...(parent ? { parent } : {}) };
}

/** The children prefix of a map when its first item is an instance that names this parent. */
async function probe(store: Store, s: Snapshot, ref: MapStepRef): Promise<string | undefined> {
  if (ref.progress.pending === ref.progress.total) return undefined; // nothing dispatched yet
  const prefix = mapChildPrefix(s, ref.step);
  const first = await store.load(mapChildId(prefix, 0));
  return first?.parent?.id === s.id && first.parent.step === ref.step ? prefix : undefined;
}
