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
  'MongoUnreachableError',
]);

/**
 * Server error codes of a replica set changing hands or shutting down (the driver's own list of
 * retryable codes, plus the write-concern timeout): a write still refused with one of them after
 * the driver's single retry is a failover that lasted longer, not a bad request.
 */
const UNAVAILABLE_CODES = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  64, // WriteConcernFailed: no majority acknowledged the write within wtimeoutMS
  89, // NetworkTimeout
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  262, // ExceededTimeLimit
  9001, // SocketException
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
]);

function hasUnavailableCode(err: { code?: unknown; writeConcernError?: { code?: unknown } }): boolean {
  return (
    (typeof err.code === 'number' && UNAVAILABLE_CODES.has(err.code)) ||
    (typeof err.writeConcernError?.code === 'number' && UNAVAILABLE_CODES.has(err.writeConcernError.code))
  );
}

/**
 * Node's own error for a command written to a connection the other side had just closed (an idle
 * connection closed by MongoDB or a proxy in between): the driver passes it on as it is, not as
 * a network error, and does not retry it.
 */
function isWriteToClosedSocket(err: { code?: unknown; message?: unknown }): boolean {
  return err.code === 'EPIPE' && err.message === 'This socket has been ended by the other party';
}

/** The error of a chain (the error, its cause, ...) that says the store is unavailable: its name and code. */
export interface UnavailableStoreError {
  name?: string;
  code?: string | number;
}

/**
 * Which error of `err`'s chain (itself, then its causes) says the store cannot be reached, if
 * any: its name and code say which rule matched (a closed connection, a pool cleared, no server
 * reachable, a timeout), which the message of the outer error often does not.
 */
export function unavailableStoreError(err: unknown): UnavailableStoreError | undefined {
  for (let current = err, depth = 0; current && typeof current === 'object' && depth < 5; depth += 1) {
    const { name, message, cause, code } = current as { name?: unknown; message?: unknown; cause?: unknown; code?: unknown };
    const found = {
      ...(typeof name === 'string' ? { name } : {}),
      ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    };
    if (typeof name === 'string' && UNAVAILABLE_NAMES.has(name)) return found;
    if (typeof name === 'string' && name.startsWith('Mongo') && hasUnavailableCode(current as { code?: unknown })) return found;
    // mongoose's own wording (not MongoDB's: mongoose raises these without a code) when a
    // command waited for a connection that never came.
    if (typeof message === 'string' && /buffering timed out|client was closed/.test(message)) return found;
    if (isWriteToClosedSocket(current as { code?: unknown; message?: unknown })) return found;
    current = cause;
  }
  return undefined;
}

export function isStoreUnavailable(err: unknown): boolean {
  return unavailableStoreError(err) !== undefined;
}
