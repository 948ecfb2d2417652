import type { AnyTarget } from '../driver.js';
import { definitions } from './definitions.js';

/** Every target, pure ones first. */
export const TARGETS: readonly AnyTarget[] = [definitions];
