import type { Request, Response } from 'express';
import { ValidationError } from '../../core/platform/errors/app-error.js';
import type { IdempotentAnswer } from '../../core/idempotency/idempotent-requests.js';

/** The caller an Idempotency-Key of the admin API belongs to: the one admin token of the deployment. */
export const ADMIN_CALLER = 'admin';

const IDEMPOTENCY_KEY_RE = /^[\x21-\x7e]{1,255}$/;
/** A structured-field string (RFC 8941 3.3.3): printable ASCII in double quotes, `"` and `\` escaped by `\`. */
const SF_STRING_RE = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;

/**
 * The key a header value names. The draft (draft-ietf-httpapi-idempotency-key-header) sends it as
 * a structured-field string, `"abc"`, which names the key `abc`: the same key as the bare `abc`
 * most clients send. A value starting with a quote is read as such a string; undefined when it is not one.
 */
function keyOfHeader(value: string): string | undefined {
  if (!value.startsWith('"')) return value;
  const quoted = SF_STRING_RE.exec(value);
  return quoted ? (quoted[1] as string).replace(/\\(["\\])/g, '$1') : undefined;
}

/** The optional `Idempotency-Key` header: 1 to 255 visible ASCII characters, bare or as a quoted string, else 422. */
export function idempotencyKeyOf(req: Request): string | undefined {
  const header = req.get('idempotency-key');
  if (header === undefined) return undefined;
  const idempotencyKey = keyOfHeader(header);
  if (idempotencyKey === undefined || !IDEMPOTENCY_KEY_RE.test(idempotencyKey)) {
    throw new ValidationError('Idempotency-Key must be 1 to 255 visible ASCII characters');
  }
  return idempotencyKey;
}

/** Sends a creating request's answer; one given again for a retry says so (`Idempotent-Replayed: true`). */
export function sendIdempotentAnswer(res: Response, answer: IdempotentAnswer & { replayed?: true }): void {
  res.status(answer.status);
  if (answer.location !== undefined) res.location(answer.location);
  if (answer.replayed) res.set('Idempotent-Replayed', 'true');
  if (answer.body === undefined) res.end();
  else res.json(answer.body);
}
