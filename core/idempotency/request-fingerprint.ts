import { createHash } from 'node:crypto';
import { ValidationError } from '../platform/errors/app-error.js';

/** JSON with object keys sorted, so the same request written in another key order is the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * What a request is compared on when its Idempotency-Key comes again: a digest of everything
 * that decides its outcome (body, path ids, query), so only a digest is kept, never the body.
 */
export function requestFingerprint(request: unknown): string {
  return createHash('sha256').update(canonicalJson(request)).digest('hex');
}

/**
 * The refusal of a key that comes again with another fingerprint: the same words on every route that
 * takes an Idempotency-Key, so a client recognises it wherever it retried.
 */
export function keyUsedWithAnotherRequest(): ValidationError {
  return new ValidationError('Idempotency-Key was already used with a different request');
}
