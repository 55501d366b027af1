/**
 * Driver errors that mean "MongoDB cannot be reached or did not answer in time" (as opposed to a
 * bad command or a duplicate key): the request can be tried again later, so the edge answers
 * 503 with Retry-After instead of an unexpected 500. Names, not classes, so errors wrapped by
 * mongoose or raised by another copy of the driver are recognised too.
 */
const UNAVAILABLE_NAMES = new Set([
  'MongoServerSelectionError',
  'MongooseServerSelectionError',
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoNotConnectedError',
  'MongoPoolClearedError',
  'MongoTopologyClosedError',
  'MongoClientClosedError',
  'MongoServerClosedError',
  'MongoOperationTimeoutError',
  'StoreTimeoutError',
]);

export function isStoreUnavailable(err: unknown): boolean {
  for (let current = err, depth = 0; current && typeof current === 'object' && depth < 5; depth += 1) {
    const { name, message, cause } = current as { name?: unknown; message?: unknown; cause?: unknown };
    if (typeof name === 'string' && UNAVAILABLE_NAMES.has(name)) return true;
    // mongoose's own wording when a command waited for a connection that never came.
    if (typeof message === 'string' && /buffering timed out|client was closed/.test(message)) return true;
    current = cause;
  }
  return false;
}
