import type { RequestHandler } from 'express';
import { BadRequestError, ValidationError } from '../../core/errors/app-error.js';
import { getValidator, type ErrorObject } from '../../core/schemas/schema-registry.js';

function fieldOf(error: ErrorObject): string {
  if (error.keyword === 'required') return String(error.params.missingProperty);
  if (error.keyword === 'additionalProperties') return String(error.params.additionalProperty);
  return error.instancePath.split('/')[1] ?? 'body';
}

/** A body that is not a JSON object is 400; a schema violation is 422 naming the field (D17). */
export function validateJsonBody(schemaId: string): RequestHandler {
  const validate = getValidator(schemaId);
  return (req, _res, next) => {
    const body: unknown = req.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      next(new BadRequestError('Malformed request body'));
      return;
    }
    if (!validate(body)) {
      const first = validate.errors?.[0];
      next(new ValidationError(`[Invalid field ${first ? fieldOf(first) : 'body'}]`));
      return;
    }
    next();
  };
}
