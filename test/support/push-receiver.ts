import { createDecipheriv, createECDH, createPublicKey, hkdfSync, randomBytes, verify, type ECDH } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * A local RFC 8030 push service for tests: it hands out subscriptions as a browser would (its own
 * P-256 key pair and auth secret per subscription), accepts the POSTs the service sends, checks the
 * VAPID token (RFC 8292) and decrypts the aes128gcm payload (RFC 8291, RFC 8188) with the
 * subscription's private keys. Written from the RFCs with node:crypto alone, so the sender's
 * library is checked by an independent implementation. Each subscription answers a scripted
 * status (410 gone, 429/500 try again) before the default 201.
 */

export interface ReceivedPush {
  subscription: string;
  /** The decrypted payload, parsed as JSON (null when it did not decrypt or parse). */
  payload: unknown;
  /** Why the push would be refused by a real push service; empty when it is valid. */
  problems: string[];
  ttl: number;
  urgency: string | undefined;
  /** The status this receiver answered. */
  status: number;
}

export interface TestSubscription {
  /** The browser's PushSubscription.toJSON(). */
  json: { endpoint: string; expirationTime: null; keys: { p256dh: string; auth: string } };
  name: string;
  /** Statuses to answer next, in order (201 when empty). */
  script: number[];
}

interface Held extends TestSubscription {
  ecdh: ECDH;
  auth: Buffer;
}

export interface PushReceiver {
  url: string;
  received: ReceivedPush[];
  /** A new subscription, as PushManager.subscribe would give one. */
  subscribe: (name: string) => TestSubscription;
  /** The VAPID public key the service must sign with (set once the test knows it). */
  expectKey: (applicationServerKey: string) => void;
  close: () => Promise<void>;
}

const decodeSegment = (segment: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as Record<string, unknown>;

/** RFC 8292: `vapid t=<JWT>, k=<public key>`, an ES256 JWT for this origin, not expired, signed by k. */
function vapidProblems(header: string | undefined, origin: string, expectedKey: string | undefined): string[] {
  const m = /^vapid t=([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header ?? '');
  if (!m) return ['Authorization is not "vapid t=<jwt>, k=<key>"'];
  const [, head, body, signature, key] = m as unknown as [string, string, string, string, string];
  const problems: string[] = [];
  if (decodeSegment(head).alg !== 'ES256') problems.push('JWT alg is not ES256');
  const claims = decodeSegment(body);
  if (claims.aud !== origin) problems.push(`aud ${String(claims.aud)} is not ${origin}`);
  const now = Date.now() / 1000;
  if (typeof claims.exp !== 'number' || claims.exp <= now || claims.exp > now + 24 * 3600) problems.push('exp not within 24 hours');
  if (typeof claims.sub !== 'string' || !/^(mailto:|https:)/.test(claims.sub)) problems.push('sub is not mailto: or https:');
  if (expectedKey !== undefined && key !== expectedKey) problems.push('k is not the application server key');
  const point = Buffer.from(key, 'base64url');
  const publicKey = createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33, 65).toString('base64url') },
    format: 'jwk',
  });
  const valid = verify(
    'sha256',
    Buffer.from(`${head}.${body}`),
    { key: publicKey, dsaEncoding: 'ieee-p1363' },
    Buffer.from(signature, 'base64url'),
  );
  if (!valid) problems.push('JWT signature does not verify with k');
  return problems;
}

/** RFC 8291 + RFC 8188: the one-record aes128gcm body, decrypted with the subscription's keys. */
export function decryptAes128gcm(body: Buffer, ecdh: ECDH, authSecret: Buffer): Buffer {
  const salt = body.subarray(0, 16);
  const idLength = body.readUInt8(20);
  const senderPublic = body.subarray(21, 21 + idLength);
  const ciphertext = body.subarray(21 + idLength);
  const ecdhSecret = ecdh.computeSecret(senderPublic);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), ecdh.getPublicKey(), senderPublic]);
  const ikm = Buffer.from(hkdfSync('sha256', ecdhSecret, authSecret, keyInfo, 32));
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16));
  const padded = Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - 16)), decipher.final()]);
  // The last record ends with the delimiter 0x02, then zero padding.
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end--;
  if (padded[end] !== 2) throw new Error('no last-record delimiter');
  return padded.subarray(0, end);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export async function startPushReceiver(): Promise<PushReceiver> {
  const received: ReceivedPush[] = [];
  const subscriptions = new Map<string, Held>();
  let expectedKey: string | undefined;
  let origin = '';

  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const id = /^\/push\/([A-Za-z0-9_-]+)$/.exec(req.url ?? '')?.[1];
      const held = id === undefined ? undefined : subscriptions.get(id);
      if (req.method !== 'POST' || !held) {
        res.statusCode = 404;
        return res.end();
      }
      const problems = vapidProblems(req.headers.authorization, origin, expectedKey);
      if (req.headers['content-encoding'] !== 'aes128gcm') problems.push('Content-Encoding is not aes128gcm');
      const ttl = Number(req.headers.ttl);
      if (!Number.isInteger(ttl) || ttl < 0) problems.push('TTL missing');
      let payload: unknown = null;
      try {
        payload = JSON.parse(decryptAes128gcm(body, held.ecdh, held.auth).toString('utf8'));
      } catch (err) {
        problems.push(`payload does not decrypt: ${(err as Error).message}`);
      }
      const status = held.script.shift() ?? (problems.length > 0 ? 400 : 201);
      const urgency = req.headers.urgency;
      received.push({
        subscription: held.name,
        payload,
        problems,
        ttl,
        urgency: typeof urgency === 'string' ? urgency : undefined,
        status,
      });
      res.statusCode = status;
      res.end();
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: origin,
    received,
    subscribe(name) {
      const ecdh = createECDH('prime256v1');
      ecdh.generateKeys();
      const auth = randomBytes(16);
      const id = randomBytes(12).toString('base64url');
      const held: Held = {
        name,
        script: [],
        ecdh,
        auth,
        json: {
          endpoint: `${origin}/push/${id}`,
          expirationTime: null,
          keys: { p256dh: ecdh.getPublicKey('base64url'), auth: auth.toString('base64url') },
        },
      };
      subscriptions.set(id, held);
      return held;
    },
    expectKey(key) {
      expectedKey = key;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
