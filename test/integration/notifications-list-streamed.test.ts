import { randomUUID } from 'node:crypto';
import { request, type IncomingMessage, type ServerResponse } from 'node:http';
import { notificationModel, toNotificationDoc } from '../../core/notifications/notifications.repository.js';
import type { Notification } from '../../core/notifications/notification.types.js';
import { startFreezableProxy, type FreezableProxy } from '../support/freezable-proxy.js';
import { ASKS_ONE_PERSON_OFTEN, mintUserToken, registerAppClient } from '../support/notification-helpers.js';
import { startTestService, uniqueName, type TestService } from '../support/test-service.js';
import { firstTestMongoHost, testMongoUriVia } from '../support/test-mongo-uri.js';
import { insertUser } from '../support/user-fixtures.js';
import { eventually } from '../support/waiting.js';

/**
 * Many large ended notifications: together far more than the socket's buffers on both sides can
 * hold (about 36 MB), so that an answer read from a cursor must wait for a slow reader.
 */
const RECORDS = 1200;
const MESSAGE_SIZE = 30_000;
/**
 * Records the API may have read from the store and not yet handed to the client: one batch, what
 * waits to be written, and what the kernel buffers between the two sockets (a few MB on
 * loopback, about 150 of these records). Reading the whole list first is RECORDS.
 */
const READ_AHEAD_BOUND = 400;
const HISTORY = '/v1/me/notifications/history';
/** How each record of the answer begins. */
const RECORD_START = '{"notification_uuid":';

describe('Notifications lists of any length: written as read, held back by a slow reader', () => {
  let proxy: FreezableProxy;
  let service: TestService;
  let token: string;
  let records: Notification[];
  /** Records the store has returned to the API's list cursors so far. */
  let readFromStore = 0;
  const started: { commandName: string; collection?: unknown }[] = [];
  /** The API's side of the latest list request. */
  let serverSide: ServerResponse | undefined;

  beforeAll(async () => {
    // Every command goes through a proxy, which can lose the store in the middle of a list.
    proxy = await startFreezableProxy(firstTestMongoHost());
    service = await startTestService('notiflist', {
      ...ASKS_ONE_PERSON_OFTEN,
      MONGODB_URI: `${testMongoUriVia(proxy.address, uniqueName('notiflist'))}&monitorCommands=true`,
    });
    const client = service.ctx.mongo.getClient();
    client.on('commandSucceeded', (event) => {
      const cursor = (event.reply as { cursor?: { ns?: string; firstBatch?: unknown[]; nextBatch?: unknown[] } }).cursor;
      if (cursor?.ns?.endsWith('.notifications')) readFromStore += (cursor.firstBatch ?? cursor.nextBatch ?? []).length;
    });
    client.on('commandStarted', (event) => {
      started.push({ commandName: event.commandName, collection: (event.command as { killCursors?: unknown }).killCursors });
    });
    service.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (req.url?.startsWith('/v1/me/notifications')) serverSide = res;
    });
    const appClientId = await registerAppClient(service);
    await insertUser(service.ctx.mongo, { userId: 'reader1' });
    token = await mintUserToken(service, { userId: 'reader1', clientId: appClientId });
    const now = Date.now();
    records = Array.from({ length: RECORDS }, (_, i) => ({
      notificationUuid: randomUUID(),
      enterpriseId: 'default',
      clientId: appClientId,
      userId: 'reader1',
      body: [{ lng: 'en', subject: `Sign-in ${i}`, message: `${i} `.padEnd(MESSAGE_SIZE, 'x') }],
      actions: [{ label: 'Approve', action: 'APPROVE', authlevel: 1 }],
      dsRequired: false,
      numberAttempts: 0,
      status: 'UPDATED',
      action: 'APPROVE',
      signingStatus: 'NA',
      isDsVerified: false,
      // Newest first is the list's order: record 0 is the newest.
      createdAt: new Date(now - 60_000 - i * 1000),
      expiresAt: new Date(now - 30_000 - i * 1000),
      answeredAt: new Date(now - 45_000 - i * 1000),
    }));
    const collection = (await notificationModel(service.ctx.mongo)).collection;
    for (let i = 0; i < RECORDS; i += 100) await collection.insertMany(records.slice(i, i + 100).map(toNotificationDoc) as never[]);
  }, 120_000);
  afterAll(async () => {
    await service.close();
    await proxy.close();
  });

  /** A GET whose answer nobody reads until the test does (Node stops reading the socket once its small buffer is full). */
  function openList(path: string): Promise<{ res: IncomingMessage; abort: () => void }> {
    serverSide = undefined;
    return new Promise((resolve, reject) => {
      const req = request(`${service.url}${path}`, { headers: { authorization: `Bearer ${token}` }, agent: false }, (res) =>
        resolve({ res, abort: () => req.destroy() }),
      );
      req.on('error', reject);
      req.end();
    });
  }

  /** The API is waiting for the socket to drain, or has written its whole answer. */
  const apiStalledOrDone = () =>
    eventually(async () => (serverSide && (serverSide.writableNeedDrain || serverSide.writableEnded) ? true : undefined));

  /** Up to `bytes` more of the answer (less at its end), read as a slow client reads it. */
  async function readSome(res: IncomingMessage, bytes: number): Promise<Buffer[]> {
    const chunks: Buffer[] = [];
    let got = 0;
    while (got < bytes && !res.readableEnded) {
      const chunk = res.read() as Buffer | null;
      if (chunk) {
        chunks.push(chunk);
        got += chunk.length;
        continue;
      }
      const more = await new Promise<boolean>((resolve) => {
        const on = (value: boolean) => () => {
          res.off('readable', onReadable);
          res.off('end', onEnd);
          res.off('close', onEnd);
          resolve(value);
        };
        const onReadable = on(true);
        const onEnd = on(false);
        res.once('readable', onReadable);
        res.once('end', onEnd);
        res.once('close', onEnd);
      });
      if (!more && res.readableLength === 0) break;
    }
    return chunks;
  }

  const countOf = (text: string, part: string) => text.split(part).length - 1;

  test('when a slow client reads all of a long history, then the API reads the store only a bounded way ahead of it, and the body is the whole list in order', async () => {
    const before = readFromStore;
    const { res } = await openList(`${HISTORY}?recordCount=0`);
    expect({ status: res.statusCode, type: res.headers['content-type'] }).toEqual({ status: 200, type: 'application/json; charset=utf-8' });
    const chunks: Buffer[] = [];
    let tail = '';
    let handed = 0;
    const aheadSeen: number[] = [];
    while (!res.readableEnded) {
      await apiStalledOrDone();
      // Records the API holds or has queued, not yet in the client's hands.
      aheadSeen.push(readFromStore - before - handed);
      const more = await readSome(res, 1024 * 1024);
      if (more.length === 0) break;
      chunks.push(...more);
      // Counted on what has arrived (a record's name may straddle two reads: the tail kept is one
      // character shorter than the name, so that no name is counted twice).
      const text = tail + more.map((chunk) => chunk.toString('latin1')).join('');
      handed += countOf(text, RECORD_START);
      tail = text.slice(-(RECORD_START.length - 1));
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { history: Record<string, unknown>[] };
    // Sampled all along the answer (each time the API waited for the reader), not just once.
    expect(aheadSeen.length).toBeGreaterThan(10);
    expect(Math.max(...aheadSeen)).toBeLessThanOrEqual(READ_AHEAD_BOUND);
    expect(body.history.map((record) => record.notification_uuid)).toEqual(records.map((record) => record.notificationUuid));
    const newest = records[0] as Notification;
    expect(body.history[0]).toEqual({
      notification_uuid: newest.notificationUuid,
      status: 'UPDATED',
      signing_status: 'NA',
      is_ds_verified: false,
      actions: newest.actions,
      body: newest.body,
      action: 'APPROVE',
      created_at: newest.createdAt.toISOString(),
      answered_at: newest.answeredAt?.toISOString(),
    });
  }, 120_000);

  test('when a pending list is long enough to go in chunks, then its body is still the one res.json wrote: same fields, same order, compact; a short one keeps its ETag', async () => {
    const now = Date.now();
    const pending: Notification[] = Array.from({ length: 40 }, (_, i) => ({
      ...(records[i] as Notification),
      notificationUuid: randomUUID(),
      body: [{ lng: 'en', subject: `Pending ${i}`, message: 'm'.repeat(1000) }],
      status: 'ACTIVE',
      signingStatus: 'NA',
      createdAt: new Date(now - 1000 - i * 1000),
      expiresAt: new Date(now + 3_600_000),
      number: '42',
    }));
    for (const n of pending) delete (n as Partial<Notification>).action;
    for (const n of pending) delete (n as Partial<Notification>).answeredAt;
    await (await notificationModel(service.ctx.mongo)).collection.insertMany(pending.map(toNotificationDoc) as never[]);
    const expected = {
      notifications: pending.map((n) => ({
        notification_uuid: n.notificationUuid,
        ds_required: false,
        number_match: true,
        actions: [{ label: 'Approve', action: 'APPROVE', authlevel: 1, requiresNumber: true }],
        body: n.body,
        created_at: n.createdAt.toISOString(),
        expires_at: n.expiresAt.toISOString(),
      })),
    };
    const all = await fetch(`${service.url}/v1/me/notifications?recordCount=0`, { headers: { authorization: `Bearer ${token}` } });
    expect({
      status: all.status,
      type: all.headers.get('content-type'),
      chunked: all.headers.get('transfer-encoding'),
      body: await all.text(),
    }).toEqual({ status: 200, type: 'application/json; charset=utf-8', chunked: 'chunked', body: JSON.stringify(expected) });
    const page = await fetch(`${service.url}/v1/me/notifications?recordCount=2&startIndex=3`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect({ etag: page.headers.get('etag'), length: page.headers.get('content-length'), body: await page.text() }).toEqual({
      etag: expect.stringMatching(/^W\/"/),
      length: expect.stringMatching(/^\d+$/),
      body: JSON.stringify({ notifications: expected.notifications.slice(2, 4) }),
    });
  }, 60_000);

  test('when the client goes away in the middle of a long list, then the API closes its cursor on the store', async () => {
    const { res, abort } = await openList(`${HISTORY}?recordCount=0`);
    expect(res.statusCode).toBe(200);
    await apiStalledOrDone();
    expect(serverSide?.writableEnded).toBe(false);
    const kills = () => started.filter((command) => command.commandName === 'killCursors');
    const killsBefore = kills().length;
    abort();
    await eventually(async () => (kills().length > killsBefore ? true : undefined));
    expect(kills().slice(killsBefore)).toEqual([{ commandName: 'killCursors', collection: 'notifications' }]);
  }, 60_000);

  test('when the store is lost after the answer began, then the connection is cut: the client never gets a well-formed but shortened list', async () => {
    const { res } = await openList(`${HISTORY}?recordCount=0`);
    expect(res.statusCode).toBe(200);
    await apiStalledOrDone();
    expect(serverSide?.writableEnded).toBe(false);
    // The next batch the API asks for never comes back: its connection to the store is closed.
    proxy.closeConnectionOfCommand('getMore', 'notifications');
    const cut = new Promise<string>((resolve) => {
      res.once('aborted', () => resolve('aborted'));
      res.once('error', (err) => resolve(`error: ${(err as NodeJS.ErrnoException).code ?? err.message}`));
    });
    const chunks = await readSome(res, Infinity);
    expect({ outcome: await cut, complete: res.complete }).toEqual({
      outcome: expect.stringMatching(/^(aborted|error: ECONNRESET)$/),
      complete: false,
    });
    expect(() => JSON.parse(Buffer.concat(chunks).toString('utf8'))).toThrow(SyntaxError);
    expect(service.logLines().some((line) => line.msg === 'database unavailable' && line.errName === 'MongoNetworkError')).toBe(true);
  }, 60_000);

  test('when the store is lost before anything was written, then the answer is the usual 503 with Retry-After', async () => {
    // The driver retries a read once: both attempts lose their connection.
    proxy.closeConnectionOfCommand('find', 'notifications', 2);
    const res = await fetch(`${service.url}${HISTORY}?recordCount=0`, { headers: { authorization: `Bearer ${token}` } });
    // The driver may not have retried (the server was seen unreachable first): nothing later is closed.
    proxy.closeConnectionOfCommand('find', 'notifications', 0);
    expect({ status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() }).toEqual({
      status: 503,
      retryAfter: '5',
      body: {
        timestamp: expect.any(String),
        status: 503,
        error: 'Service Unavailable',
        message: 'Service unavailable: the database is not reachable; retry later',
        path: HISTORY,
        code: 39,
      },
    });
  }, 60_000);
});
