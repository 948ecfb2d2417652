import { describeMigratingWaiting } from '../../engine/test/migrate-waiting-scenario.js';
import { useTestTables } from './test-tables.js';

// The memory store's scenario (engine/test/migrate-waiting-scenario.ts) on PostgreSQL tables.
const { store } = useTestTables('s22');

describeMigratingWaiting('postgres: migrating waiting instances to a new version', () => store());
