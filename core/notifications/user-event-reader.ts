import type { RedisClient } from '../platform/queues/redis-connection.js';

/** What a user's event stream says: a new notification, or one of theirs reaching a final state. */
export interface UserNotificationEvent {
  type: 'created' | 'ended';
  notification_uuid: string;
  status: string;
  /** For `created`: when it expires (no event is sent for expiry; the app drops it then). */
  expires_at?: string;
}

const STREAM_ID_RE = /^([0-9]{1,20})-([0-9]{1,20})$/;

/** Redis stream ids compare as (milliseconds, sequence). */
export function compareStreamIds(a: string, b: string): number {
  const [, am = '0', as = '0'] = STREAM_ID_RE.exec(a) ?? [];
  const [, bm = '0', bs = '0'] = STREAM_ID_RE.exec(b) ?? [];
  const byMs = BigInt(am) - BigInt(bm);
  if (byMs !== 0n) return byMs < 0n ? -1 : 1;
  const bySeq = BigInt(as) - BigInt(bs);
  return bySeq === 0n ? 0 : bySeq < 0n ? -1 : 1;
}

const MAX_ID_PART = 2n ** 64n - 1n;

/** Both parts within Redis's 64-bit range: Redis refuses a larger one, which would fail every read. */
export function isStreamId(value: string): boolean {
  const [, ms, seq] = STREAM_ID_RE.exec(value) ?? [];
  return ms !== undefined && seq !== undefined && BigInt(ms) <= MAX_ID_PART && BigInt(seq) <= MAX_ID_PART;
}

/** An entry's event; an entry this code did not write (no `event` field, not JSON) is skipped, not sent. */
function eventOf(fields: string[]): UserNotificationEvent | undefined {
  const at = fields.indexOf('event');
  if (at < 0 || at % 2 !== 0) return undefined;
  try {
    return JSON.parse(fields[at + 1] ?? '') as UserNotificationEvent;
  } catch {
    return undefined;
  }
}

/** Entries read per XRANGE; a full batch is followed by another read at once. */
const READ_BATCH = 100;
/** A failed read is tried again after this, doubling while it keeps failing. */
const RETRY_FIRST_MS = 1000;
/** The longest wait between tries: the sweep wakes every stream every 15 s anyway. */
const RETRY_LONGEST_MS = 8000;

export interface UserEventReader {
  /**
   * Takes the starting point and sends what the client missed; a failure refuses the stream. Wake-ups
   * before or during it fold into its read.
   */
  start(): Promise<void>;
  /** Sends what was appended since the last event sent; calls while a read runs fold into one more read. */
  wake(): void;
  /** No read starts after this, and no event of a read under way is sent. */
  stop(): void;
}

/**
 * One open stream's reader of a user's Redis stream. The stream, not the pub/sub message that
 * says something was appended, is what gets sent: messages can arrive late or out of order (on a
 * Redis Cluster each PUBLISH goes through whichever node the client picked and reaches the other
 * nodes' subscribers later), and may be lost while a subscriber reconnects. Reading by id from
 * the last event sent gives every event once, in id order, whatever the messages did.
 *
 * Starts after `lastEventId` when it is an id the stream has reached (what the client missed is
 * sent first), otherwise after the stream's newest entry: an event appended before the stream
 * opened is not this stream's, even if its message arrives later.
 */
export function createUserEventReader(deps: {
  redis: RedisClient;
  key: string;
  lastEventId?: string;
  send: (id: string, event: UserNotificationEvent) => void;
  /** A wake-up read that failed; it is tried again from the same place within seconds. */
  onReadError: (err: Error) => void;
  /** Overrides the wait before the first try again after a failed read. */
  retryFirstMs?: number;
}): UserEventReader {
  let lastSent = '0-0';
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let failuresInRow = 0;
  // The start counts as a read under way: a wake-up before it has read is covered by its read.
  let reading = true;
  let readAgain = false;

  const readAll = async (): Promise<void> => {
    do {
      readAgain = false;
      const entries = await deps.redis.xrange(deps.key, `(${lastSent}`, '+', 'COUNT', READ_BATCH);
      for (const [id, fields] of entries) {
        if (stopped) return;
        lastSent = id;
        const event = eventOf(fields);
        if (event) deps.send(id, event);
      }
      if (entries.length === READ_BATCH) readAgain = true;
    } while (readAgain && !stopped);
  };
  const runRead = async (first?: () => Promise<void>): Promise<void> => {
    reading = true;
    try {
      await first?.();
      await readAll();
    } finally {
      reading = false;
    }
  };
  const takeStartingPoint = async (): Promise<void> => {
    const [newest] = await deps.redis.xrevrange(deps.key, '+', '-', 'COUNT', 1);
    const head = newest?.[0] ?? '0-0';
    // An id past the newest entry (another deployment's, a forged one) would hold back every event until time caught up.
    const resumeAt = deps.lastEventId;
    lastSent = resumeAt !== undefined && isStreamId(resumeAt) && compareStreamIds(resumeAt, head) < 0 ? resumeAt : head;
  };

  // A read that failed (Redis briefly unreachable, a command timed out) is tried again soon, so an
  // event whose message woke the stream is not left waiting for the sweep.
  const retryLater = (wake: () => void): void => {
    if (stopped || retry) return;
    const waitMs = Math.min((deps.retryFirstMs ?? RETRY_FIRST_MS) * 2 ** failuresInRow, RETRY_LONGEST_MS);
    failuresInRow += 1;
    retry = setTimeout(() => {
      retry = undefined;
      wake();
    }, waitMs).unref();
  };

  const reader: UserEventReader = {
    start: () => runRead(takeStartingPoint),
    wake() {
      if (stopped) return;
      if (reading) {
        readAgain = true;
        return;
      }
      runRead().then(
        () => {
          failuresInRow = 0;
        },
        (err: Error) => {
          deps.onReadError(err);
          retryLater(() => reader.wake());
        },
      );
    },
    stop() {
      stopped = true;
      clearTimeout(retry);
      retry = undefined;
    },
  };
  return reader;
}
