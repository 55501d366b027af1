/**
 * The refusals of the service as domain errors: each class says what went wrong (the input is
 * malformed, a thing is missing, gone, locked, a budget is spent, a store is unavailable ...),
 * never how a protocol answers it. The HTTP edge (api/errors/http-error-mapping.ts) alone turns
 * a kind into a status, headers and a body.
 */
export type ErrorKind =
  | 'malformed'
  | 'invalid'
  | 'not-found'
  | 'forbidden'
  | 'conflict'
  | 'gone'
  | 'locked'
  | 'rate-limited'
  | 'unavailable'
  | 'dependency-failed';

export interface AppErrorOptions {
  /** Short label of the refusal shown beside the message (for example `Invalid data.`); the edge defaults it by kind. */
  error?: string;
  /** Facts about the refusal the caller is told (for example `attemptsLeft`, `userStatus`). */
  extra?: Record<string, unknown>;
  cause?: unknown;
}

/** The one base error of the project: a stable code, a kind and a caller-facing message. */
export abstract class AppError extends Error {
  abstract readonly kind: ErrorKind;
  readonly error: string | undefined;
  readonly extra: Record<string, unknown>;

  constructor(
    readonly code: string,
    message: string,
    options: AppErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.error = options.error;
    this.extra = options.extra ?? {};
  }
}

/** The request cannot be read (a missing field, a body that is not an object). */
export class BadRequestError extends AppError {
  readonly kind = 'malformed';
  constructor(message: string, options?: AppErrorOptions & { code?: string }) {
    super(options?.code ?? 'BAD_REQUEST', message, options);
  }
}

/** The request reads, but a value breaks a rule (includes a wrong code). */
export class ValidationError extends AppError {
  readonly kind = 'invalid';
  constructor(message: string, options?: AppErrorOptions & { code?: string }) {
    super(options?.code ?? 'VALIDATION_FAILED', message, options);
  }
}

export class NotFoundError extends AppError {
  readonly kind = 'not-found';
  constructor(message: string, options?: AppErrorOptions & { code?: string }) {
    super(options?.code ?? 'NOT_FOUND', message, options);
  }
}

/** The caller is known but may not do this (a user blocked by an admin). */
export class ForbiddenError extends AppError {
  readonly kind = 'forbidden';
  constructor(code: string, message: string, options?: AppErrorOptions) {
    super(code, message, options);
  }
}

/** The thing is in a state that refuses the request (already used, exists, changed meanwhile). */
export class ConflictError extends AppError {
  readonly kind = 'conflict';
  /** When the state ends by itself (a claim that lapses), how long the caller should wait before trying again. */
  readonly retryAfterSeconds: number | undefined;
  constructor(message: string, options?: AppErrorOptions & { code?: string; retryAfterSeconds?: number }) {
    super(options?.code ?? 'CONFLICT', message, options);
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }
}

/** The thing ended for good (expired, cancelled): asking again never helps. */
export class GoneError extends AppError {
  readonly kind = 'gone';
  constructor(code: string, message: string, options?: AppErrorOptions) {
    super(code, message, options);
  }
}

/** Too many failures locked the thing until someone acts (a new code, an admin). */
export class LockedError extends AppError {
  readonly kind = 'locked';
  constructor(code: string, message: string, options?: AppErrorOptions) {
    super(code, message, options);
  }
}

/** Where one budget stood when it refused or admitted a request (what the caller may be told). */
export interface RateBudget {
  /** The budget's stable name. */
  policy: string;
  /** Requests allowed per window. */
  quota: number;
  windowSeconds: number;
  remaining: number;
  /** Seconds until the window starts over. */
  resetSeconds: number;
}

/** A budget is spent: the caller may try again after `retryAfterSeconds`. */
export class RateLimitedError extends AppError {
  readonly kind = 'rate-limited';
  readonly retryAfterSeconds: number;
  /** The caller's own budgets that may be reported; never a budget of someone else. */
  readonly budgets: readonly RateBudget[];
  constructor(message: string, limit: { retryAfterSeconds: number; budgets?: readonly RateBudget[] }) {
    super('RATE_LIMITED', message);
    this.retryAfterSeconds = limit.retryAfterSeconds;
    this.budgets = limit.budgets ?? [];
  }
}

/** The service cannot answer now (a store down, a feature switched off, too busy); the message is shown. */
export class UnavailableError extends AppError {
  readonly kind = 'unavailable';
  /** How long the caller should wait before trying again, when known. */
  readonly retryAfterSeconds: number | undefined;
  constructor(message: string, options?: AppErrorOptions & { retryAfterSeconds?: number }) {
    super('SERVICE_UNAVAILABLE', message, options);
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }
}

/** A service this one depends on failed; the message is part of a contract, so it is shown. */
export class DependencyFailedError extends AppError {
  readonly kind = 'dependency-failed';
  constructor(code: string, message: string, options?: AppErrorOptions) {
    super(code, message, options);
  }
}
