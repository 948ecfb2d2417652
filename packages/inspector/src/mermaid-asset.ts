// The diagram is drawn by Mermaid's own browser bundle, served by the inspector itself from the
// host's `mermaid` package (an optional peer): nothing is loaded from a CDN, so it works on closed
// networks. Without the package the page shows the Mermaid source and the coloured steps table.

/** The bundle's bytes, read once on first use; `null` when the `mermaid` package is not installed. */
export type MermaidBundle = () => Promise<Uint8Array | null>;

/** Finds `mermaid/dist/mermaid.min.js` beside the inspector (Node's resolution) and caches its bytes. */
export function mermaidBundle(): MermaidBundle {
  let found: Promise<Uint8Array | null> | undefined;
  return () => {
    found ??= (async () => {
      try {
        // Imported lazily: the inspector itself stays loadable where node:module is not.
        const { createRequire } = await import('node:module');
        const { readFile } = await import('node:fs/promises');
        const path = createRequire(import.meta.url).resolve('mermaid/dist/mermaid.min.js');
        return new Uint8Array(await readFile(path));
      } catch {
        return null;
      }
    })();
    return found;
  };
}
