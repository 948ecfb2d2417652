// Kept out of errors.ts (the main entry): only this entry raises them; its code is in ERROR_KINDS.

import { StepfoldError } from '../errors.js';

/** A value over the payload store's `maxPayloadBytes`; nothing was stored or written. */
export class PayloadTooLargeError extends StepfoldError<'PAYLOAD_TOO_LARGE'> {
  constructor(
    readonly owner: string,
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(
      'PAYLOAD_TOO_LARGE',
      `payload of ${JSON.stringify(owner)} is ${bytes} bytes, over the payload store's limit of ${limit}`,
      { retryable: false },
    );
  }
}

/** A snapshot refers to a payload the payload store does not hold (or whose content fails its hash). */
export class PayloadNotFoundError extends StepfoldError<'PAYLOAD_NOT_FOUND'> {
  constructor(
    readonly owner: string,
    readonly sha256: string,
  ) {
    super(
      'PAYLOAD_NOT_FOUND',
      `payload ${sha256.slice(0, 12)} of ${JSON.stringify(owner)} is not in the payload store`,
      {
        retryable: false,
      },
    );
  }
}
