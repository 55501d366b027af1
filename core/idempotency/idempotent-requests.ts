import { randomUUID } from 'node:crypto';
import { decryptSecret, encryptSecret } from '../crypto/secret-box.js';
import { AppError, ConflictError, type ErrorKind } from '../platform/errors/app-error.js';
import type { Logger } from '../platform/logger/logger.js';
import type { IdempotencyRecord, IdempotencyRecordsRepository, IdempotencyScope, StoredAnswer } from './idempotency-records.repository.js';
import { keyUsedWithAnotherRequest, requestFingerprint } from './request-fingerprint.js';

/** What a creating request answers: a status, an optional Location and an optional JSON body. */
export interface IdempotentAnswer {
  status: number;
  location?: string;
  body?: unknown;
  /** The body holds a secret shown once: it is kept sealed and given again only for a short while. */
  secret?: boolean;
}

/**
 * The claim the work runs under. `id` is the same for every request that works under this key
 * (a retry that takes over an unfinished claim gets the same one), so work that derives the id
 * of what it creates from it finds, on a retry, what the first request created before it died.
 */
export interface IdempotencyClaim {
  id: string;
  /** A retry finishing work that an earlier request with the key started and did not answer. */
  resumed: boolean;
}

export interface IdempotentRequest {
  scope: IdempotencyScope;
  /** The Idempotency-Key header; without it the work just runs. */
  key: string | undefined;
  /** Everything that decides the outcome (body, path ids, query), compared when the key comes again. */
  request: unknown;
}

export interface IdempotentRequestsDeps {
  records: IdempotencyRecordsRepository;
  encryptionKey: Buffer;
  /** How long a key is remembered after its first use. */
  retentionMs: number;
  /** How long an answer holding a secret may be given again (0: never). */
  secretReplayMs: number;
  logger: Logger;
  now?: () => Date;
}

/**
 * How long a claim whose request has not answered is left to it before a retry may take it
 * over: far longer than any creating request takes, so only a request whose process died loses it.
 */
export const PENDING_LEASE_MS = 60_000;

/** Refusals that changed nothing: the key is given back, so a retry of the same request may succeed later. */
const REFUSED_BEFORE_WORK: ReadonlySet<ErrorKind> = new Set([
  'malformed',
  'invalid',
  'not-found',
  'forbidden',
  'conflict',
  'gone',
  'locked',
  'rate-limited',
]);

/** What a sealed answer is bound to: the claim that made it. */
export const sealContext = (claimId: string) => `idempotency:${claimId}`;

/**
 * The key is held by a request that has not answered. Retry-After is the rest of its lease: by
 * then it has answered (the retry is a replay) or a retry may take its claim over; never 0.
 */
const stillRunning = (startedAt: Date, at: Date) =>
  new ConflictError('A request with this Idempotency-Key is still being processed: retry after it has been answered', {
    code: 'IDEMPOTENCY_KEY_IN_USE',
    retryAfterSeconds: Math.max(1, Math.ceil((startedAt.getTime() + PENDING_LEASE_MS - at.getTime()) / 1000)),
  });

/**
 * One Idempotency-Key mechanism for creating requests (draft-ietf-httpapi-idempotency-key-header):
 * the first request with a key claims it and does the work; the same key with the same request
 * gets the first answer again; with another request, 422; while the first is still running, 409.
 */
export function createIdempotentRequests(deps: IdempotentRequestsDeps) {
  const now = deps.now ?? (() => new Date());

  function stored(record: IdempotencyRecord, answer: IdempotentAnswer, at: Date): StoredAnswer {
    const head = { status: answer.status, ...(answer.location === undefined ? {} : { location: answer.location }) };
    if (answer.body === undefined) return head;
    const text = JSON.stringify(answer.body);
    if (!answer.secret) return { ...head, body: text };
    // Nothing of a secret is kept when it may never be given again.
    if (deps.secretReplayMs === 0) return { ...head, secretUntil: at };
    return {
      ...head,
      sealed: encryptSecret(text, deps.encryptionKey, sealContext(record.claimId)),
      secretUntil: new Date(at.getTime() + deps.secretReplayMs),
    };
  }

  /**
   * The sealed answer's text, or undefined when no configured key opens it (its key was dropped
   * before a reseal, or the value was altered): the secret is then as good as no longer kept, and
   * the caller gets that answer rather than a 500 on every retry.
   */
  function openSealed(record: IdempotencyRecord, sealed: string): string | undefined {
    try {
      return decryptSecret(sealed, deps.encryptionKey, sealContext(record.claimId));
    } catch {
      deps.logger.warn(
        { collection: 'idempotency_records', claimId: record.claimId },
        'kept idempotent answer opens with no configured key; answered as no longer kept',
      );
      return undefined;
    }
  }

  async function replay(record: IdempotencyRecord): Promise<IdempotentAnswer> {
    const answer = record.answer ?? { status: 204 };
    const head = { status: answer.status, ...(answer.location === undefined ? {} : { location: answer.location }) };
    if (answer.secretUntil === undefined) return answer.body === undefined ? head : { ...head, body: JSON.parse(answer.body) as unknown };
    if (answer.sealed !== undefined && now().getTime() <= answer.secretUntil.getTime()) {
      const opened = openSealed(record, answer.sealed);
      if (opened !== undefined) return { ...head, body: JSON.parse(opened) as unknown };
    }
    if (answer.sealed !== undefined) await deps.records.forgetSecret(record);
    throw new ConflictError(
      'The request with this Idempotency-Key succeeded, but its answer held a secret that is shown once and no longer kept: rotate the secret to get a new one',
      { code: 'IDEMPOTENT_SECRET_NOT_KEPT', extra: answer.location === undefined ? {} : { location: answer.location } },
    );
  }

  return {
    /**
     * Runs `work` once per key: returns its answer, or the first request's answer again
     * (`replayed`). Throws 422 for a key used with another request, 409 while it is in use.
     */
    async run(
      request: IdempotentRequest,
      work: (claim: IdempotencyClaim | undefined) => Promise<IdempotentAnswer>,
    ): Promise<IdempotentAnswer & { replayed?: true }> {
      if (request.key === undefined) return work(undefined);
      const at = now();
      const entry: IdempotencyRecord = {
        ...request.scope,
        key: request.key,
        requestHash: requestFingerprint(request.request),
        claimId: randomUUID(),
        state: 'PENDING',
        startedAt: at,
        createdAt: at,
        expiresAt: new Date(at.getTime() + deps.retentionMs),
      };
      const claim = await deps.records.claim(entry);
      let record = entry;
      let resumed = false;
      if (!claim.claimed) {
        record = claim.existing;
        if (record.requestHash !== entry.requestHash) throw keyUsedWithAnotherRequest();
        if (record.state === 'DONE') return { ...(await replay(record)), replayed: true };
        if (at.getTime() - record.startedAt.getTime() < PENDING_LEASE_MS) throw stillRunning(record.startedAt, at);
        // The request holding the key died without answering: this retry finishes its work.
        // Losing the take-over to another retry means that one's lease has just begun.
        if (!(await deps.records.takeOver(record, at))) throw stillRunning(at, at);
        record = { ...record, startedAt: at };
        resumed = true;
      }
      let answer: IdempotentAnswer;
      try {
        answer = await work({ id: record.claimId, resumed });
      } catch (err) {
        await settleFailed(record, err);
        throw err;
      }
      // The work is done: if its answer cannot be kept, a retry resumes the claim (after the lease).
      await deps.records
        .complete(record, stored(record, answer, now()))
        .catch((err: unknown) =>
          deps.logger.warn({ err: (err as Error).message }, 'idempotent answer not stored; a retry will resume the work'),
        );
      return answer;
    },
  };

  /**
   * A refusal gives the key back (nothing was done). Any other failure may have happened after
   * something was written: the claim stays, open at once to a retry, which resumes under its id.
   */
  async function settleFailed(record: IdempotencyRecord, err: unknown): Promise<void> {
    const refused = err instanceof AppError && REFUSED_BEFORE_WORK.has(err.kind);
    const settled = refused ? deps.records.release(record) : deps.records.takeOver(record, new Date(0));
    await settled.catch((storeErr: unknown) =>
      deps.logger.warn({ err: (storeErr as Error).message }, 'idempotency claim not settled after a failed request'),
    );
  }
}

export type IdempotentRequests = ReturnType<typeof createIdempotentRequests>;
