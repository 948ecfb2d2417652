import type { AnyTarget } from '../driver.js';
import { cli } from './cli.js';
import { definitions } from './definitions.js';
import { events } from './events.js';
import { inbox } from './inbox.js';
import { inspector } from './inspector.js';
import { notices, noticeWorker } from './notices.js';
import { storedMemory, storedPg } from './stored.js';

/** Every target, pure ones first. */
export const TARGETS: readonly AnyTarget[] = [
  definitions,
  events,
  notices,
  noticeWorker,
  inbox,
  storedMemory,
  storedPg,
  cli,
  inspector,
];
