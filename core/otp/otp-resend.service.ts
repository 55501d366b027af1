import { createHash, randomBytes } from 'node:crypto';
import type { DeliveriesRepository } from '../deliveries/deliveries.repository.js';
import { sealDelivery } from '../deliveries/delivery-envelope.js';
import { otpDeliveryId, otpResendDeliveryId, type Delivery } from '../deliveries/delivery.types.js';
import { ConflictError, NotFoundError, ValidationError } from '../platform/errors/app-error.js';
import type { Logger } from '../platform/logger/logger.js';
import type { IdempotencyRepository } from './idempotency.repository.js';
import type { OtpKeys } from '../crypto/otp-keys.js';
import type { BudgetState } from '../platform/throttling/rate-limit-headers.js';
import { otpEnded, publicStatus, type OtpPublicStatus } from './otp-validation.service.js';
import type { OtpRecord, OtpsRepository } from './otps.repository.js';
import { queuedOtpRow } from './otp-delivery-row.js';
import { decryptSecret } from '../crypto/secret-box.js';

export interface OtpResendDeps {
  otps: Pick<OtpsRepository, 'findForClient' | 'addResend'>;
  deliveries: Pick<DeliveriesRepository, 'findByRef' | 'insertMany'>;
  idempotency: Pick<IdempotencyRepository, 'claim'>;
  /** Queues one delivery, sealed when its row is certainly new; failures are left to the sweeper. */
  enqueue: (deliveryId: string, sealed?: string, priority?: number) => Promise<void>;
  keys: OtpKeys;
  logger: Logger;
  now?: () => Date;
}

export interface ResendCommand {
  otpUuid: string;
  clientId: string;
  enterpriseId: string;
  idempotencyKey?: string;
  /** Takes the rate limits of a send to this user (429 when spent). */
  admit: (userId: string) => Promise<BudgetState[]>;
  /**
   * The BullMQ priority of the resend's dispatch jobs, read once admitted: a resend takes the same
   * enterprise budget as a first send, so it gets the same fair-share priority
   * (core/platform/queues/dispatch-fairness.ts) and cannot jump ahead of other enterprises' OTPs.
   */
  dispatchPriority?: () => Promise<number | undefined>;
}

/** `replayed`: an earlier request with the same key did the resend (its limits may need giving back). */
export type ResendResult = { replayed: true } | { replayed?: undefined; limits: BudgetState[] };

/** Where the resend copy of the code is bound: it decrypts for this OTP only. */
export const resendCodeContext = (otpUuid: string) => `resend:${otpUuid}`;

/** What a resend with an Idempotency-Key is compared on: the OTP it names (the route has no body). */
const requestHashOf = (otpUuid: string) => createHash('sha256').update(`resend ${otpUuid}`).digest('hex');

/**
 * The resend id of a keyed request: derived from its claim, so a retry (or a duplicate racing it)
 * lands on the same delivery ids and job ids instead of sending a second time.
 */
const keyedResendId = (clientId: string, key: string, claimedAt: Date) =>
  createHash('sha256').update(`${clientId}\n${key}\n${claimedAt.getTime()}`).digest('hex').slice(0, 16);

const notResendable = (otpUuid: string, status: OtpPublicStatus) => otpEnded(otpUuid, status, `OTP cannot be resent: it is ${status}`);

/**
 * Sends an ACTIVE OTP's code again: same code, same channels, same addresses and templates as its
 * first messages. The code comes from the OTP's own encrypted copy (never stored in clear); each
 * resend writes new delivery rows, so the status shows every attempt.
 */
export function createOtpResendService(deps: OtpResendDeps) {
  const now = deps.now ?? (() => new Date());

  /** The resend's rows, built from the first messages (address, template, macros). */
  async function rowsOf(record: OtpRecord, resendId: string, at: Date): Promise<Delivery[]> {
    if (record.resendCode === undefined) return [];
    const code = decryptSecret(record.resendCode, deps.keys.encryptionKey, resendCodeContext(record.otpUuid));
    const firsts = new Map((await deps.deliveries.findByRef(record.otpUuid)).map((row) => [row.id, row]));
    return record.channels.flatMap((channel) => {
      const first = firsts.get(otpDeliveryId(record.otpUuid, channel));
      if (!first) return [];
      const id = otpResendDeliveryId(record.otpUuid, channel, resendId);
      // A test OTP's resends stay test messages (never a provider), whatever the client is now.
      const row = queuedOtpRow(
        record,
        { id, channel, to: first.to, template: first.template, macros: first.macros, test: first.test },
        code,
        deps.keys.encryptionKey,
        at,
      );
      return [row];
    });
  }

  /**
   * Writes the rows (upserts: a retry leaves existing ones as they are) and queues them. Only a
   * resend whose id is new to the world travels sealed; a keyed one may repeat an earlier job
   * already done, so its worker reads the row (and skips it if it was sent).
   */
  async function writeAndQueue(record: OtpRecord, resendId: string, fresh: boolean, priority?: number): Promise<void> {
    const rows = await rowsOf(record, resendId, now());
    await deps.deliveries.insertMany(rows);
    await Promise.all(
      rows.map(async (row) => {
        try {
          await deps.enqueue(row.id, fresh ? sealDelivery(row, deps.keys.encryptionKey) : undefined, priority);
        } catch (err) {
          deps.logger.warn({ err: (err as Error).message, deliveryId: row.id }, 'dispatch enqueue failed; left for the sweeper');
        }
      }),
    );
  }

  return {
    /** 404 unknown or another client's; 409 not ACTIVE (or made before resends); 429 limits; 422 key reuse. */
    async resend(command: ResendCommand): Promise<ResendResult> {
      const { otpUuid, clientId, idempotencyKey } = command;
      const record = await deps.otps.findForClient(otpUuid, clientId);
      if (!record) throw new NotFoundError('OTP not found');
      let resendId = randomBytes(8).toString('hex');
      if (idempotencyKey !== undefined) {
        const requestHash = requestHashOf(otpUuid);
        const entry = { enterpriseId: command.enterpriseId, clientId, key: idempotencyKey, requestHash, otpUuid, createdAt: now() };
        const claim = await deps.idempotency.claim(entry);
        const owner = claim.claimed ? entry : claim.existing;
        if (owner.requestHash !== requestHash) throw new ValidationError('Idempotency-Key was already used with a different request');
        resendId = keyedResendId(clientId, idempotencyKey, owner.createdAt);
        if (record.resends?.includes(resendId)) {
          // Committed earlier: finish what it may have left undone, send nothing new, use no limit.
          await writeAndQueue(record, resendId, false);
          return { replayed: true };
        }
      }
      const at = now();
      const status = publicStatus(record, at);
      if (status !== 'ACTIVE') throw notResendable(otpUuid, status);
      if (record.resendCode === undefined) {
        throw new ConflictError('OTP cannot be resent: it was generated before resends were possible', {
          code: 'OTP_NOT_RESENDABLE',
          extra: { otpUuid, status },
        });
      }
      const limits = await command.admit(record.userId);
      // The commit point, conditional on the OTP being still ACTIVE: a resend racing a cancel,
      // a validation or the expiry is decided once.
      const committed = await deps.otps.addResend(otpUuid, clientId, resendId, now());
      if (!committed) {
        const latest = await deps.otps.findForClient(otpUuid, clientId);
        if (!latest) throw new NotFoundError('OTP not found');
        throw notResendable(otpUuid, publicStatus(latest, now()));
      }
      const priority = await command.dispatchPriority?.();
      await writeAndQueue(committed.record, resendId, idempotencyKey === undefined, priority);
      // A duplicate with the same key committed first: this request sent nothing of its own.
      if (!committed.added) return { replayed: true };
      return { limits };
    },
  };
}

export type OtpResendService = ReturnType<typeof createOtpResendService>;
