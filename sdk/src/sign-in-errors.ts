// Sign-in failures as SvcIdentityError: oauth4webapi throws its own error classes (and fetch its
// TypeError); an app should not need to know them to tell "sign in again" from "try later".
import * as oauth from 'oauth4webapi';
import { SvcIdentityError, type ErrorKind, type OperationName } from './errors.js';
import { TimeoutError } from './timeout.js';

/** OAuth error codes that mean the grant or the sign-in is over (RFC 6749 5.2, OpenID Connect 3.1.2.6). */
const SIGN_IN_OVER = new Set(['invalid_grant', 'invalid_token', 'login_required', 'consent_required', 'interaction_required']);

function byStatus(status: number): ErrorKind {
  if (status === 401) return 'sign-in-again';
  return status >= 500 ? 'network' : 'refused';
}

/** Whether `err` is fetch failing to reach the service (TypeError), or a timeout or abort. */
function isTransportFailure(err: unknown): boolean {
  if (err instanceof TimeoutError) return true;
  if (typeof err !== 'object' || err === null) return false;
  // Names, not instanceof: fetch's errors may come from another realm (a worker, a test VM).
  const name = (err as { name?: unknown }).name;
  if (name === 'AbortError' || name === 'TimeoutError') return true;
  // oauth4webapi's own argument checks are TypeErrors with an ERR_INVALID_ARG_* code.
  const code = (err as { code?: unknown }).code;
  return name === 'TypeError' && !(typeof code === 'string' && code.startsWith('ERR_INVALID_ARG'));
}

export function signInError(operation: OperationName, err: unknown, timedOut?: unknown): SvcIdentityError {
  if (err instanceof SvcIdentityError) return err;
  if (timedOut !== undefined)
    return new SvcIdentityError({
      operation,
      kind: 'network',
      message: `the service could not be reached: ${String(timedOut)}`,
      cause: timedOut,
    });
  if (err instanceof oauth.ResponseBodyError) {
    const kind = SIGN_IN_OVER.has(err.error) ? 'sign-in-again' : byStatus(err.status);
    return new SvcIdentityError({
      operation,
      kind,
      message: err.error_description ?? err.error,
      status: err.status,
      details: { error: err.error },
      cause: err,
    });
  }
  if (err instanceof oauth.AuthorizationResponseError) {
    // The redirect came back with an error (the person declined, the session ended...): the app
    // starts a new sign-in.
    return new SvcIdentityError({
      operation,
      kind: 'sign-in-again',
      message: err.error_description ?? err.error,
      details: { error: err.error },
      cause: err,
    });
  }
  if (err instanceof oauth.WWWAuthenticateChallengeError) {
    return new SvcIdentityError({ operation, kind: byStatus(err.status), message: err.message, status: err.status, cause: err });
  }
  if (err instanceof oauth.OperationProcessingError && err.cause instanceof Response) {
    const status = err.cause.status;
    return new SvcIdentityError({ operation, kind: byStatus(status), message: `the service answered ${status}`, status, cause: err });
  }
  if (isTransportFailure(err)) {
    const message = err instanceof Error ? err.message : String(err);
    return new SvcIdentityError({ operation, kind: 'network', message: `the service could not be reached: ${message}`, cause: err });
  }
  // An answer that does not conform (wrong issuer, bad state, missing fields): after the redirect
  // a new sign-in is what helps; before it, the service is not one this library can use.
  const message = err instanceof Error ? err.message : String(err);
  return new SvcIdentityError({ operation, kind: operation === 'FinishSignIn' ? 'sign-in-again' : 'refused', message, cause: err });
}
