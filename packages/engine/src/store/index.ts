// `@stepfold/engine`: what a store adapter is built from. `defineStore` turns an adapter's
// narrow database calls into a `Store`; the rest are the pieces wake sources and drivers share.
export { type Backoff, backoffDelay, OUTAGE_BACKOFF } from '../backoff.js';
// The snapshot format's upgrade chain: every store's load runs it.
export {
  FORMAT_UPGRADES,
  type FormatUpgrade,
  type UpgradeOptions,
  upgradeSnapshot,
} from '../snapshot-format.js';
export {
  claimMsOption,
  DEFAULT_CLAIM_MS,
  type DefinedStore,
  defineStore,
} from './define-store.js';
// The flow capability of stores that keep a counter in one versioned record.
export {
  compareFlowCounters,
  type DocumentFlowOptions,
  documentFlow,
  type FlowDocumentCalls,
  flowRefId,
  type StoredFlowDocument,
} from './document-flow.js';
// The stream capability of stores that keep a stream as a log of batch records.
export {
  type DocumentStreamOptions,
  documentStream,
  type StreamBatch,
  type StreamDocumentCalls,
} from './document-stream.js';
export type {
  CreateFlow,
  FlowGrant,
  FlowKeyPage,
  FlowKeyState,
  FlowNeed,
  FlowStore,
  SaveFlow,
} from './flow.js';
export {
  FLOW_HELD_UNTIL_RELEASED,
  isFlowText,
  MAX_FLOW_HOLDER_LENGTH,
  MAX_FLOW_NEEDS,
  MAX_FLOW_PAGE,
  MAX_FLOW_TEXT_LENGTH,
} from './flow-calls.js';
export {
  emptyFlowDocument,
  type FlowDenial,
  type FlowDocument,
  type FlowHold,
  type FlowStart,
  type FlowWaiter,
  flowCounterOf,
  flowDenial,
  flowGiveBack,
  flowHas,
  flowKeyStateOf,
  flowRelease,
  flowRenew,
  flowTake,
  flowWait,
  instancesToWake,
  isEmptyFlowDocument,
  pruneFlowDocument,
} from './flow-document.js';
export {
  type CheckedSearch,
  checkSearch,
  compareSearch,
  kindRank,
  type ListOrder,
  MAX_IN_VALUES,
  matchesSearch,
  passes,
  type SearchCursor,
  type SearchFilter,
  type SearchRow,
  searchOrder,
  searchRows,
  type WhereCondition,
  type WhereOps,
} from './list-query.js';
export type {
  ClaimsDriver,
  ClaimWindow,
  DriverOutcome,
  DueWindow,
  FlowCounterRef,
  FlowDriver,
  FlowListArgs,
  InboxDriver,
  InsertFlow,
  SentEntry,
  SentRow,
  StoreDefinition,
  StoreDriver,
  StoredStreamEntry,
  StoredStreamPage,
  StreamDriver,
  UpdateCondition,
} from './store-driver.js';
export {
  createStoreKit,
  DEADLINE_INDEX_MS,
  type EncodedSnapshot,
  isNetworkError,
  type ListArgs,
  type ListSearch,
  NETWORK_ERROR_CODES,
  type SizeLimits,
  type StoreKit,
  storeGuard,
  type UpdateOutcome,
} from './store-kit.js';
export type {
  StreamAppended,
  StreamAttempt,
  StreamChunk,
  StreamEntry,
  StreamPage,
  StreamReadQuery,
  StreamReset,
  StreamStore,
  StreamTailOptions,
  StreamWriter,
  StreamWriterOptions,
} from './stream.js';
export { attemptStream } from './stream-attempt.js';
export {
  fenceOf,
  MAX_STREAM_BATCH,
  MAX_STREAM_BATCH_BYTES,
  MAX_STREAM_CHUNK_BYTES,
  MAX_STREAM_PAGE,
  MAX_STREAM_STEP_LENGTH,
} from './stream-chunks.js';
export { readStreamTail, type StreamTail, TAIL_ENTRIES } from './stream-tail.js';
export { textDigest } from './text-digest.js';
export { isBusyNotice, isHandoffNotice, parseWakePayload, wakeNotice } from './wake-notice.js';
export { addWhere, parseListOrder, parseWhere, whereValues } from './where-text.js';
