import type { Response } from 'express';
import { ValidationError } from '../../core/platform/errors/app-error.js';
import type { EnterpriseShares } from '../../core/notifications/enterprise-shares.js';
import type { NotificationEndEvents } from '../../core/notifications/notification-end-events.js';
import type { Notification } from '../../core/notifications/notification.types.js';

/** The longest `?wait=` a request may ask for, in seconds. */
export const MAX_WAIT_SECONDS = 60;
/**
 * How often a waiter reads the record again whatever it heard: pub/sub may lose a message (a
 * subscriber reconnecting, a Redis failover, a process that ended it without publishing), and a
 * draining server must let its waiters go.
 */
export const WAIT_POLL_MS = 1000;

/** `?wait=` in whole seconds, 0 to 60; absent means 0. 422 `[Invalid field wait]` otherwise. */
export function parseWaitSeconds(value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value !== 'string' || !/^[0-9]{1,2}$/.test(value) || Number(value) > MAX_WAIT_SECONDS)
    throw new ValidationError('[Invalid field wait]', { error: 'Invalid data.' });
  return Number(value);
}

/**
 * Reads the notification until it is in a final state or `seconds` have passed; the last read
 * is the answer. Woken by the end events of every API process, by the notification's own expiry
 * time, and every WAIT_POLL_MS; stops early (with the current state) when the client goes away,
 * the server starts draining, or another enterprise takes the wait's place back (`shares`). A
 * request finding no place (the process's waits are full, NOTIFICATION_WAITS_PER_PROCESS, or its
 * enterprise holds its share of them) is answered at once: the client polls again.
 */
export async function waitForFinalState(args: {
  read: () => Promise<Notification>;
  events: NotificationEndEvents;
  uuid: string;
  seconds: number;
  /** The response: its `close` before an answer means the client went away. */
  res: Response;
  isDraining: () => boolean;
  /** The process's waits, shared between enterprises, and the enterprise of this one. */
  shares: EnterpriseShares;
  enterpriseId: string;
}): Promise<Notification | undefined> {
  const { read, events, uuid, seconds, res, isDraining } = args;
  let current = await read();
  if (seconds === 0 || current.status !== 'ACTIVE') return current;
  const place = args.shares.take(args.enterpriseId);
  if (typeof place === 'string') return current;
  const deadline = Date.now() + seconds * 1000;
  // Set by every end event; cleared as each read starts. An event told while a read is in flight
  // (the read may have seen the record just before the answer) means "read again now": without
  // this the waiter would sleep a whole poll interval on a stale ACTIVE.
  let told = false;
  let wake: () => void = () => undefined;
  const stopListening = events.listen(uuid, () => {
    told = true;
    wake();
  });
  let gone = false;
  let letGo = false;
  place.lendable(() => {
    letGo = true;
    wake();
  });
  const onClose = () => {
    gone = true;
    wake();
  };
  res.on('close', onClose);
  const readAgain = () => {
    told = false;
    return read();
  };
  try {
    await events.ready();
    // Read again now that this process listens: an answer given in between is not missed.
    current = await readAgain();
    while (current.status === 'ACTIVE' && !gone && !letGo && !isDraining()) {
      const now = Date.now();
      if (now >= deadline) break;
      // The record turns EXPIRED at expiresAt by the clock: wake then, too.
      const sleep = Math.min(deadline - now, WAIT_POLL_MS, Math.max(current.expiresAt.getTime() - now + 1, 0));
      if (!told)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, sleep);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      if (gone || letGo) break;
      current = await readAgain();
    }
  } finally {
    place.release();
    stopListening();
    res.off('close', onClose);
  }
  return gone ? undefined : current;
}
