/** A failure worth retrying later: throttling, provider outage, timeout or network error. */
export class TransientProviderError extends Error {
  constructor(
    message: string,
    /** How long the provider asked us to wait (from `Retry-After`), when it said so. */
    readonly retryAfterMs: number | undefined,
    readonly status: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'TransientProviderError';
  }
}

/** A failure that repeats on every retry (invalid number, rejected request): stop trying. */
export class PermanentProviderError extends Error {
  constructor(
    /** The provider's own explanation, safe to store as the delivery's last error. */
    readonly reason: string,
    readonly status: number | undefined,
    /** The provider's error code when it gives one (Twilio 21211 = invalid `To` number). */
    readonly providerCode: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(reason, options);
    this.name = 'PermanentProviderError';
  }
}

/**
 * A message the deployment's own policy refused before any provider was asked (SMS_ALLOWED_COUNTRIES).
 * Permanent, and the recipient's (another account would refuse it too). No provider had it: its
 * delivery row names none and no provider call is timed, so a burst of refusals (SMS pumping)
 * never reads as a failing provider account.
 */
export class RefusedBeforeProviderError extends PermanentProviderError {
  constructor(reason: string, code: string) {
    super(reason, undefined, code);
    this.name = 'RefusedBeforeProviderError';
  }
}

export type ProviderError = TransientProviderError | PermanentProviderError;

/** `Retry-After` is either delta-seconds or an HTTP date (RFC 9110 10.2.3). */
export function parseRetryAfter(value: unknown, now = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (typeof raw !== 'string' && typeof raw !== 'number') return undefined;
  const text = String(raw).trim();
  if (/^[0-9]+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export interface HttpFailure {
  status: number;
  headers: Record<string, unknown>;
  reason: string;
  providerCode?: string;
}

/** 408, 429 and 5xx are worth retrying; every other 4xx will fail the same way again. */
export function classifyHttpFailure(failure: HttpFailure, provider: string): ProviderError {
  const { status } = failure;
  if (status === 408 || status === 429 || status >= 500) {
    const retryAfterMs = parseRetryAfter(failure.headers['retry-after'] ?? failure.headers['Retry-After']);
    return new TransientProviderError(`${provider} answered ${status}: ${failure.reason}`, retryAfterMs, status);
  }
  return new PermanentProviderError(failure.reason, status, failure.providerCode);
}

/** Errors without an HTTP answer (refused connection, reset, timeout) are transient. */
export function classifyNetworkFailure(err: unknown, provider: string): TransientProviderError {
  const code = (err as { code?: unknown })?.code;
  const detail = typeof code === 'string' ? code : err instanceof Error ? err.message : 'unknown error';
  return new TransientProviderError(`${provider} unreachable: ${detail}`, undefined, undefined, { cause: err });
}
