import { afterAll, beforeAll } from 'vitest';

// The real Mermaid parser for the diagram tests: the `mermaid` package needs a DOM for DOMPurify,
// a jsdom window set up for the calling file only; a diagram's outcome is read back from the
// parser's own flowchart database.

/** A vertex of the parsed flowchart. */
export interface Vertex {
  id: string;
  text: string;
  type?: string;
  classes: string[];
}

/** The parser's flowchart database: vertices, subgraphs, edges and classes. */
export interface FlowDb {
  getVertices(): Map<string, Vertex>;
  getSubGraphs(): Array<{ id: string; title: string; nodes: string[] }>;
  getEdges(): Array<{ start: string; end: string; text: string; stroke: string }>;
  getClasses(): Map<string, { styles: string[] }>;
}

interface Mermaid {
  parse(text: string): Promise<unknown>;
  mermaidAPI: { getDiagramFromText(text: string): Promise<{ db: unknown }> };
}

/**
 * Sets up the parser before the calling file's tests (a jsdom window, mermaid loaded and its diagram
 * types registered) and closes the window after them; returns the parse: it throws on a syntax
 * error, else gives the diagram's database.
 */
export function useMermaid(): (text: string) => Promise<FlowDb> {
  let mermaid: Mermaid | undefined;
  let closeWindow: (() => void) | undefined;
  beforeAll(async () => {
    const { JSDOM } = await import('jsdom');
    const dom = new JSDOM('');
    const g = globalThis as Record<string, unknown>;
    g.window = dom.window;
    g.document = dom.window.document;
    closeWindow = () => {
      delete g.window;
      delete g.document;
      dom.window.close();
    };
    mermaid = (await import('mermaid')).default as unknown as Mermaid;
    await mermaid.parse('flowchart TD\n  a --> b'); // registers the diagram types
  });
  afterAll(() => closeWindow?.());
  return async (text) => {
    if (!mermaid) throw new Error('useMermaid: the parser is set up in beforeAll, call it from a test');
    await mermaid.parse(text);
    return (await mermaid.mermaidAPI.getDiagramFromText(text)).db as FlowDb;
  };
}

/** Mermaid keeps `#35;` entities as placeholders until it renders; turn them back into text. */
export const decode = (text: string): string =>
  text.replace(/\uFB02\u00B0\u00B0(\d+)\u00B6\u00DF/g, (_m, n: string) => String.fromCodePoint(Number(n)));
