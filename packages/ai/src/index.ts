// `@stepfold/ai`: durable agents on the AI SDK. The loop is workflow data (`agentWorkflows`), its
// steps are handlers (`agentHandlers`), and a chat reads its stream by offset (`agentChatRoute` on
// the server, `StepfoldChatTransport` in the browser).
export {
  type AgentRunner,
  decideToolCall,
  type PendingToolCall,
  pendingIn,
  pendingToolCalls,
  sendMessage,
} from './agent-client.js';
export { type AgentHandlersOptions, agentHandlers } from './agent-handlers.js';
export {
  type AgentWorkflowOptions,
  type AgentWorkflows,
  APPROVAL_SIGNAL,
  agentWorkflows,
  MESSAGE_SIGNAL,
  MODEL_KEEP,
  MODEL_STEP,
  TOOLS_STEP,
} from './agent-workflow.js';
export { type AgentChatRouteOptions, agentChatRoute, streamHead } from './chat-route.js';
export {
  type ChatOffset,
  type ChatOffsets,
  type OffsetStorage,
  StepfoldChatTransport,
  type StepfoldChatTransportOptions,
  storageOffsets,
} from './chat-transport.js';
export { type ModelStepOptions, modelStep } from './model-step.js';
export { type ToolStepInput, toolStep } from './tool-step.js';
export {
  type AgentInput,
  type AgentMessage,
  addUsage,
  type ModelTurn,
  type PreparedCall,
  type PrepareStepInput,
  prepareCall,
  type ToolApproval,
  type ToolCallItem,
  type ToolOutcome,
  type TurnUsage,
  toolMessage,
} from './transcript.js';
export { isTurnEnd } from './ui-chunks.js';
