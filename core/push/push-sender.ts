import type { CallbackAddressPolicy } from '../notifications/callback-address-policy.js';
import { guardedPost, type Resolver } from '../notifications/guarded-post.js';
import { loadOnFirstUse } from '../platform/load-on-first-use.js';
import type { VapidKeys } from './vapid-keys.js';

/** What a push carries: that something is waiting, never what (the app fetches it, signed in). */
export const PUSH_PAYLOAD = JSON.stringify({ type: 'notification' });

export interface PushTarget {
  endpoint: string;
  p256dh: string;
  auth: string;
}

export interface PushSendOptions {
  vapid: VapidKeys;
  vapidSubject: string;
  /** Seconds the push service may keep the message for an offline browser. */
  ttlSeconds: number;
  policy: CallbackAddressPolicy;
  timeoutMs: number;
  resolver?: Resolver;
}

// web-push (and asn1.js, jws, http_ece under it) is loaded on the first push, not at start: the
// notification worker imports this file whether or not any app has a push subscription.
const loadWebPush = loadOnFirstUse(() => import('web-push').then((m) => m.default));

/**
 * Encrypts the payload for the browser (RFC 8291, aes128gcm), signs a VAPID token for the push
 * service's origin (RFC 8292) with web-push, and POSTs it (RFC 8030) through the same address
 * fence as callbacks: the endpoint's host is resolved and checked on the connection itself, and
 * redirects are not followed. Resolves with the push service's status code.
 */
export async function sendPush(target: PushTarget, options: PushSendOptions): Promise<number> {
  const webPush = await loadWebPush();
  const details = webPush.generateRequestDetails(
    { endpoint: target.endpoint, keys: { p256dh: target.p256dh, auth: target.auth } },
    PUSH_PAYLOAD,
    {
      vapidDetails: { subject: options.vapidSubject, publicKey: options.vapid.publicKey, privateKey: options.vapid.privateKey },
      TTL: options.ttlSeconds,
      urgency: 'high',
      contentEncoding: 'aes128gcm',
    },
  );
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(details.headers)) {
    // guardedPost sets the length of what it sends.
    if (name.toLowerCase() !== 'content-length') headers[name] = String(value);
  }
  return guardedPost(target.endpoint, details.body, headers, {
    policy: options.policy,
    timeoutMs: options.timeoutMs,
    ...(options.resolver ? { resolver: options.resolver } : {}),
  });
}

export type PushAnswer = 'accepted' | 'gone' | 'retry' | 'rejected';

/**
 * What a push service's status means (RFC 8030 section 5 and the services' documented answers):
 * 201/2xx accepted; 404 and 410 the subscription is gone for good; 429 and 5xx try again
 * later; any other refusal (400 bad request, 401/403 VAPID refused, 413 too large) will not get
 * better by retrying.
 */
export function classifyPushStatus(status: number): PushAnswer {
  if (status >= 200 && status < 300) return 'accepted';
  if (status === 404 || status === 410) return 'gone';
  if (status === 429 || status >= 500) return 'retry';
  return 'rejected';
}
