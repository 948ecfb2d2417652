/**
 * Reads the few fields of a wrangler.toml that Miniflare needs (the compatibility date, the
 * Durable Object bindings, which classes are SQLite-backed), so the tests run the template as
 * shipped. A line reader for the template's shape, not a TOML parser.
 */

/** What Miniflare needs from a wrangler.toml. */
export interface WranglerConfig {
  name: string;
  main: string;
  compatibilityDate: string;
  durableObjects: Record<string, { className: string; useSQLite: boolean }>;
}

const value = (raw: string): string | string[] => {
  const v = raw.trim();
  if (v.startsWith('[')) return [...v.matchAll(/"([^"]*)"/g)].map((m) => m[1] ?? '');
  const m = /^"([^"]*)"$/.exec(v);
  if (!m) throw new Error(`wrangler.toml: unsupported value ${v}`);
  return m[1] ?? '';
};

/** The config of `text`; throws on what this reader does not understand. */
export function readWranglerToml(text: string): WranglerConfig {
  const top: Record<string, string | string[]> = {};
  const tables: Array<{ name: string; fields: Record<string, string | string[]> }> = [];
  for (const line of text.split('\n').map((l) => l.trim())) {
    if (line === '' || line.startsWith('#')) continue;
    const header = /^\[\[([\w.]+)\]\]$/.exec(line);
    if (header) {
      tables.push({ name: header[1] ?? '', fields: {} });
      continue;
    }
    const kv = /^([\w-]+)\s*=\s*(.+)$/.exec(line);
    if (!kv) throw new Error(`wrangler.toml: unsupported line ${line}`);
    (tables.at(-1)?.fields ?? top)[kv[1] ?? ''] = value(kv[2] ?? '');
  }
  const sqlite = new Set(
    tables.filter((t) => t.name === 'migrations').flatMap((t) => t.fields.new_sqlite_classes ?? []),
  );
  const durableObjects: WranglerConfig['durableObjects'] = {};
  for (const t of tables.filter((t) => t.name === 'durable_objects.bindings')) {
    const className = String(t.fields.class_name);
    durableObjects[String(t.fields.name)] = { className, useSQLite: sqlite.has(className) };
  }
  return {
    name: String(top.name),
    main: String(top.main),
    compatibilityDate: String(top.compatibility_date),
    durableObjects,
  };
}
