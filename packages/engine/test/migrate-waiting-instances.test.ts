import { createMemoryStore } from '@stepfold/engine';
import { describeMigratingWaiting } from './migrate-waiting-scenario.js';

describeMigratingWaiting('migrating waiting instances to a new version', async () => createMemoryStore());
