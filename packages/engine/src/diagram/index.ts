// `@stepfold/engine`: workflow diagrams as Mermaid text, for tools and docs.
export { nodeIds } from './kind.js';
export { type MermaidOptions, toMermaid } from './mermaid.js';
export { type DiagramState, STATE_STYLES, stepState, stepStates } from './states.js';
export { conditionText, encodeId, escapeLabel } from './text.js';
