import type { PgQueryable } from './setup.js';

/** Runs one statement of the store, prepared unless turned off. */
export type Query = <R = Record<string, unknown>>(
  text: string,
  values: unknown[],
) => Promise<{ rows: R[]; rowCount: number | null }>;

// One name per distinct statement text, shared by every store in the process: a name must not be
// reused for another text on the same connection, and stores may share a pool.
const statementNames = new Map<string, string>();
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `stepfold_${statementNames.size + 1}`;
    statementNames.set(text, name);
  }
  return name;
}

/** The store's {@link Query} on `pool`: named prepared statements (parsed and planned once per connection) unless `prepared` is false. */
export function pgQuery(pool: PgQueryable, prepared: boolean): Query {
  return (text, values) =>
    pool.query(prepared ? { name: statementName(text), text, values } : { text, values });
}
