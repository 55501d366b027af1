// A receiver of svc-identity's notification callbacks, for an enterprise backend to copy.
// Node's standard library only. Run behind your https front: the service sends callbacks to
// public https addresses only.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

/** Callbacks are small: a body over this is refused before it is read to the end. */
const MAX_BODY_BYTES = 16 * 1024;
/** How far a callback's signed time may be from this machine's clock, either way. */
const DEFAULT_TOLERANCE_SECONDS = 300;

/**
 * Checks `X-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`.
 *
 * - The HMAC is over the raw bytes as received: parse the JSON only after this check (a body
 *   parsed and serialized again need not give the same bytes).
 * - `secrets` may hold more than one: your current callback secret and, while you switch to a
 *   new one, the other. The key is the secret's text as the admin API returned it.
 * - Comparisons take the same time whatever matches (no timing leak of a correct prefix).
 * - A signature made more than `toleranceSeconds` from now is refused, so a callback copied from a
 *   log or the network cannot be replayed later.
 */
export function verifyCallbackSignature({
  header,
  rawBody,
  secrets,
  nowSeconds = Math.floor(Date.now() / 1000),
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
}) {
  if (typeof header !== 'string') return false;
  const fields = header.split(',').map((part) => part.trim().split('='));
  const t = fields.find(([name]) => name === 't')?.[1];
  const signatures = fields.filter(([name, value]) => name === 'v1' && /^[0-9a-f]{64}$/.test(value ?? '')).map(([, value]) => value);
  if (t === undefined || !/^\d{1,12}$/.test(t) || signatures.length === 0) return false;
  if (Math.abs(nowSeconds - Number(t)) > toleranceSeconds) return false;
  const signed = Buffer.concat([Buffer.from(`${t}.`, 'utf8'), rawBody]);
  let matched = false;
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(signed).digest();
    for (const signature of signatures) matched = timingSafeEqual(expected, Buffer.from(signature, 'hex')) || matched;
  }
  return matched;
}

/**
 * An HTTP server that takes callbacks at any path: a valid one is answered 204 and handed to
 * `onCallback` once per notification (delivery is at least once: the same final state may come
 * again after a lost answer, and is answered 204 again without a second `onCallback`). A wrong
 * signature is 401 and a malformed request 400: the service retries those for a day, which gives
 * you time to fix a secret. Keep `seen` in your database in production (a unique key on
 * `notification_uuid`); a Set is lost on restart and grows without bound.
 */
export function createCallbackReceiver({ secrets, onCallback, seen = new Set(), now = () => Math.floor(Date.now() / 1000) }) {
  return createServer((req, res) => {
    const answer = (status) => {
      res.statusCode = status;
      res.end();
    };
    if (req.method !== 'POST') return answer(405);
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        answer(413);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', async () => {
      if (res.writableEnded) return;
      const rawBody = Buffer.concat(chunks);
      if (!verifyCallbackSignature({ header: req.headers['x-signature'], rawBody, secrets: secrets(), nowSeconds: now() }))
        return answer(401);
      let body;
      try {
        body = JSON.parse(rawBody.toString('utf8'));
      } catch {
        return answer(400);
      }
      if (typeof body?.notification_uuid !== 'string') return answer(400);
      try {
        if (!seen.has(body.notification_uuid)) {
          await onCallback(body);
          seen.add(body.notification_uuid);
        }
        answer(204);
      } catch {
        // Not handled: a 5xx makes the service send it again later.
        answer(503);
      }
    });
  });
}
