// One error type for every failure of the library, so an app needs one `catch` and one switch:
// `kind` says what to do next, `code` is the result code every client library of the service
// shares, and `cause` keeps what went wrong underneath (a fetch error, an OAuth error body...).
import { ResultCode, type ResultCodeValue } from './result-codes.js';

/**
 * What the app should do about a failure:
 * - `sign-in-again`: the sign-in is over (refresh token expired or revoked, access token refused
 *   with 401, the redirect does not belong to this sign-in); start a new sign-in.
 * - `refused`: the library or the service refused this request (bad argument, unknown
 *   notification, wrong number, blocked user...); show the message, do not retry it as it is.
 * - `network`: the service could not be reached or answered unexpectedly (fetch failed, timeout,
 *   5xx such as 503 while it is unavailable); retry later.
 */
export type ErrorKind = 'sign-in-again' | 'refused' | 'network';

/** The notification operations, and the steps of signing in and out. */
export type OperationName =
  | 'GetNotifications'
  | 'UpdateNotification'
  | 'DismissNotification'
  | 'GetNotificationHistory'
  | 'WatchNotifications'
  | 'GetPushKey'
  | 'RegisterPushSubscription'
  | 'UnregisterPushSubscription'
  | 'Discover'
  | 'StartSignIn'
  | 'FinishSignIn'
  | 'Refresh'
  | 'RegisterPasskey'
  | 'ListPasskeys'
  | 'RemovePasskey';

export interface SvcIdentityErrorFields {
  operation: OperationName;
  kind: ErrorKind;
  /** Defaults from `kind`: 4 when refused, 39 otherwise. */
  code?: Exclude<ResultCodeValue, 0>;
  message: string;
  /** HTTP status of the service's answer; absent when no answer came or nothing was sent. */
  status?: number;
  /** Other fields of the service's refusal, e.g. `triesLeft` after a wrong matching number, or `error`. */
  details?: Readonly<Record<string, unknown>>;
  /** The original failure (fetch's TypeError, an oauth4webapi error...). */
  cause?: unknown;
}

export class SvcIdentityError extends Error {
  override readonly name = 'SvcIdentityError';
  readonly operation: OperationName;
  readonly kind: ErrorKind;
  /** 4 invalid arguments, 39 unknown error, 141 user blocked (the service's client library codes). */
  readonly code: Exclude<ResultCodeValue, 0>;
  readonly status?: number;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(fields: SvcIdentityErrorFields) {
    super(fields.message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.operation = fields.operation;
    this.kind = fields.kind;
    this.code = fields.code ?? (fields.kind === 'refused' ? ResultCode.INVALID_ARGUMENTS : ResultCode.UNKNOWN_ERROR);
    if (fields.status !== undefined) this.status = fields.status;
    this.details = fields.details ?? {};
  }
}

/** The former name of SvcIdentityError, kept so existing `instanceof` checks and imports work. */
export const ClientLibraryError = SvcIdentityError;
export type ClientLibraryError = SvcIdentityError;

/** A refusal by the library itself, before any request (code 4). */
export function invalidArgument(operation: OperationName, message: string): SvcIdentityError {
  return new SvcIdentityError({ operation, kind: 'refused', code: ResultCode.INVALID_ARGUMENTS, message });
}

/** Any failure as an SvcIdentityError: ours are kept, anything else is a network failure. */
export function asSvcIdentityError(operation: OperationName, err: unknown): SvcIdentityError {
  if (err instanceof SvcIdentityError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new SvcIdentityError({ operation, kind: 'network', message: `the service could not be reached: ${message}`, cause: err });
}
