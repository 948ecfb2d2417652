export * from './errors.js';
export { assertValidId, isValidId, MAX_ID_LENGTH } from './ids.js';
export { createMemoryStore, type MemoryStore, type MemoryStoreOptions } from './memory-store.js';
export * from './snapshot.js';
export { type ListPage, type ListQuery, type Store, snapshotBytes } from './store.js';
