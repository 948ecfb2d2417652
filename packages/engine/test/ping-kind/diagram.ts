import type { DiagramKind } from '../../src/diagram/kind.js';
import type { PingStep } from './reducer.js';

/** `ping`: its row of the diagram's table, as `src/diagram/kinds.ts` would hold it. */
export const pingDiagram: DiagramKind<PingStep> = {
  shape: ['((', '))'],
  label: (step) => `ping ×${step.times ?? 1}`,
};
