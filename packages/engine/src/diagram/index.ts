// `@stepfold/engine/diagram`: workflow diagrams, kept out of the main entry so it does not grow.
export { nodeIds } from './kind.js';
export { type MermaidOptions, toMermaid } from './mermaid.js';
export { type DiagramState, STATE_STYLES, stepState, stepStates } from './states.js';
export { conditionText, encodeId, escapeLabel } from './text.js';
