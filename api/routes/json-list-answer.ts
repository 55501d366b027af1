import type { Request, Response } from 'express';
import type { Logger } from '../../core/platform/logger/logger.js';
import { errorResponseOf } from '../errors/error-pipeline.js';

/**
 * Bytes gathered before a write: enough that a list of small records is not sent as one chunk
 * each, small enough that what waits here stays far below what one batch of records holds.
 */
const WRITE_SIZE = 16 * 1024;

/** What `res.json` says it sends. */
const JSON_TYPE = 'application/json; charset=utf-8';

/** Resolves once the socket has room again, or the client has gone (then nothing more is written). */
function roomOrGone(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

/**
 * Answers `{"<key>":[...]}` (the body `res.json` would write, byte for byte) while the records
 * are read: each batch is written before the next is asked for, and when the socket's buffer is
 * full the next read waits for it to drain, so a slow reader holds the store's cursor back
 * instead of making the API buffer the list. A client that goes away ends the reading (the
 * iterator's return() closes the cursor). A failure before anything is sent is thrown, to be
 * answered as any other (a store that is down: 503 with Retry-After); after that the status has
 * gone out, so the connection is cut: a client never reads a well-formed but shortened list.
 */
export async function sendJsonList<T>(
  req: Request,
  res: Response,
  logger: Logger,
  key: string,
  records: AsyncIterable<T>,
  toJson: (record: T) => unknown,
): Promise<void> {
  const iterator = records[Symbol.asyncIterator]();
  let gone = false;
  const onClose = () => {
    gone = true;
  };
  res.once('close', onClose);
  let pending = `{${JSON.stringify(key)}:[`;
  let first = true;
  try {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      if (gone) return;
      pending += (first ? '' : ',') + JSON.stringify(toJson(next.value));
      first = false;
      if (pending.length < WRITE_SIZE) continue;
      if (!res.headersSent) res.setHeader('Content-Type', JSON_TYPE);
      const room = res.write(pending);
      pending = '';
      if (!room) await roomOrGone(res);
      if (gone) return;
    }
    if (res.headersSent) res.end(`${pending}]}`);
    // A list that fits in one write is answered as res.json answers (Content-Length, ETag, 304).
    else res.type(JSON_TYPE).send(`${pending}]}`);
  } catch (err) {
    if (!res.headersSent) throw err;
    // Logged as the error pipeline logs it (a store that is down is a warning, not a fault).
    errorResponseOf(err, req, logger);
    res.destroy();
  } finally {
    res.off('close', onClose);
    // Closes the cursor when the reading stopped early (client gone, failure); a no-op once done.
    // A cursor the store already failed on may fail to close too: nothing more is owed then.
    await iterator.return?.().catch(() => undefined);
  }
}
