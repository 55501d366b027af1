import type { Request, Response } from 'express';
import { ValidationError } from '../../core/platform/errors/app-error.js';
import type { IdempotentAnswer } from '../../core/idempotency/idempotent-requests.js';

/** The caller an Idempotency-Key of the admin API belongs to: the one admin token of the deployment. */
export const ADMIN_CALLER = 'admin';

const IDEMPOTENCY_KEY_RE = /^[\x21-\x7e]{1,255}$/;

/** The optional `Idempotency-Key` header: 1 to 255 visible ASCII characters, else 422. */
export function idempotencyKeyOf(req: Request): string | undefined {
  const idempotencyKey = req.get('idempotency-key');
  if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY_RE.test(idempotencyKey)) {
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
