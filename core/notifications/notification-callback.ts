import { createHmac } from 'node:crypto';
import { guardedPost, type GuardedPostOptions } from './guarded-post.js';
import type { Notification } from './notification.types.js';

/** The callback body: the notification's final state. */
export function callbackPayload(n: Notification): Record<string, unknown> {
  return {
    notification_uuid: n.notificationUuid,
    status: n.status,
    ...(n.action !== undefined ? { action: n.action } : {}),
    signing_status: n.signingStatus,
    is_ds_verified: n.isDsVerified,
    answeredAt: (n.answeredAt ?? n.expiresAt).toISOString(),
  };
}

/**
 * `X-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`: the timestamp is
 * signed with the body so a receiver can refuse replays of old callbacks.
 */
export function signCallback(secret: string, rawBody: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${rawBody}`, 'utf8').digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

export class CallbackRefusedError extends Error {
  constructor(readonly httpStatus: number) {
    super(`callback answered HTTP ${httpStatus}`);
    this.name = 'CallbackRefusedError';
  }
}

/**
 * POSTs the signed body to an allowed address only (guarded-post.ts); any answer other than 2xx,
 * a network error or the timeout throws.
 */
export async function postCallback(
  url: string,
  rawBody: string,
  secret: string,
  options: GuardedPostOptions,
  now = new Date(),
): Promise<number> {
  const status = await guardedPost(
    url,
    rawBody,
    { 'content-type': 'application/json', 'x-signature': signCallback(secret, rawBody, Math.floor(now.getTime() / 1000)) },
    options,
  );
  if (status < 200 || status > 299) throw new CallbackRefusedError(status);
  return status;
}
