import type { RequestHandler } from 'express';
import { AppError, ValidationError } from '../../core/platform/errors/app-error.js';
import { getValidator, type ErrorObject } from '../../core/platform/schemas/schema-registry.js';
import { schemaErrorField, schemaErrorLine } from '../../core/platform/schemas/schema-error-message.js';

/** Default: 422 `Invalid field <name>: <rule>` for the first violation (the admin CLI words its refusals the same). */
export function schemaViolation(errors: ErrorObject[]): AppError {
  const first = errors[0];
  if (!first) return new ValidationError('Invalid request body');
  return new ValidationError(`Invalid field ${schemaErrorLine(first)}`);
}

export interface ValidateBodyOptions {
  /** Builds the error for a body that fails the schema (routes with their own wording, e.g. Add user's `[Invalid field <name>]`). */
  toError?: (errors: ErrorObject[]) => AppError;
}

/** The enterprise wording `[Invalid field <name>]`, for routes that answer in it. */
export function invalidFieldError(options: { error?: string } = {}): (errors: ErrorObject[]) => AppError {
  return (errors) => new ValidationError(`[Invalid field ${errors[0] ? schemaErrorField(errors[0]) || '(body)' : 'body'}]`, options);
}

/** Validates `req.body` (already parsed by jsonBody) against the schema with this `$id`. */
export function validateBody(schemaId: string, options: ValidateBodyOptions = {}): RequestHandler {
  const validate = getValidator(schemaId);
  const toError = options.toError ?? schemaViolation;
  return (req, _res, next) => {
    if (!validate(req.body)) throw toError(validate.errors ?? []);
    next();
  };
}
