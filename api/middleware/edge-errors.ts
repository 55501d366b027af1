import type { Request } from 'express';
import { isStoreUnavailable } from '../../core/platform/db/store-unavailable.js';
import { ServiceUnavailableError } from '../../core/platform/errors/app-error.js';
import type { Logger } from '../../core/platform/logger/logger.js';
import { fromBodyParser } from './body-parser-errors.js';

/** Seconds a client is asked to wait when a store is down: about one reconnect attempt. */
export const STORE_RETRY_AFTER_SECONDS = 5;

/**
 * What an error means at the HTTP edge, whichever body renders it (the enterprise body, the client
 * library's body with `code`): body-parser refusals become the service's own errors, and a store
 * that cannot be reached becomes 503 with Retry-After, never a 500.
 */
export function toEdgeError(rawErr: unknown, req: Request, logger: Logger): unknown {
  if (isStoreUnavailable(rawErr)) {
    (req.log ?? logger).warn({ err: (rawErr as Error).message }, 'database unavailable');
    return new ServiceUnavailableError('Service unavailable: the database is not reachable; retry later', {
      headers: { 'Retry-After': String(STORE_RETRY_AFTER_SECONDS) },
    });
  }
  return (rawErr && typeof rawErr === 'object' && fromBodyParser(rawErr as { type?: string })) || rawErr;
}
