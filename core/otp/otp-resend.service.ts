import { createHash, randomBytes } from 'node:crypto';
import type { DeliveriesRepository } from '../deliveries/deliveries.repository.js';
import { sealDelivery } from '../deliveries/delivery-envelope.js';
import { otpDeliveryId, otpResendDeliveryId, type Delivery } from '../deliveries/delivery.types.js';
import { ConflictError, NotFoundError } from '../platform/errors/app-error.js';
import type { Logger } from '../platform/logger/logger.js';
import type { IdempotencyRepository } from './idempotency.repository.js';
import { keyUsedWithAnotherRequest } from '../idempotency/request-fingerprint.js';
import type { OtpKeys } from '../crypto/otp-keys.js';
import type { BudgetState } from '../platform/throttling/rate-limit-headers.js';
import { otpEnded, publicStatus, type OtpPublicStatus } from './otp-validation.service.js';
import type { OtpRecord, OtpsRepository } from './otps.repository.js';
import { queuedOtpRow } from './otp-delivery-row.js';
import { decryptSecret } from '../crypto/secret-box.js';
import type { SmsCountries } from '../providers/sms-country-policy.js';
import { undeliverableSms } from './otp-sms-country.js';

export interface OtpResendDeps {
  otps: Pick<OtpsRepository, 'findForClient' | 'addResend'>;
  deliveries: Pick<DeliveriesRepository, 'findByRef' | 'insertMany'>;
  idempotency: Pick<IdempotencyRepository, 'claim'>;
  /** Queues one delivery, sealed when its row is certainly new; failures are left to the sweeper. */
  enqueue: (deliveryId: string, sealed?: string, priority?: number) => Promise<void>;
  keys: OtpKeys;
  logger: Logger;
  /** The deployment's SMS_ALLOWED_COUNTRIES (undefined: every country). */
  smsCountries?: SmsCountries;
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

  /**
   * The code to send again. One that no configured key opens (the key that sealed it was dropped
   * before `npm run reseal` reached it) cannot be sent: 409, the OTP stays ACTIVE and can still be
   * validated. The warning names the OTP, never the code.
   */
  function openResendCode(record: OtpRecord, sealed: string): string {
    try {
      return decryptSecret(sealed, deps.keys.encryptionKey, resendCodeContext(record.otpUuid));
    } catch {
      deps.logger.warn({ collection: 'otps', otpUuid: record.otpUuid }, 'OTP resend code opens with no configured key');
      throw new ConflictError('OTP cannot be resent: its code is no longer kept', {
        code: 'OTP_NOT_RESENDABLE',
        extra: { otpUuid: record.otpUuid, status: publicStatus(record, now()) },
      });
    }
  }

  /**
   * The resend's rows still to write, built from the first messages (address, template, macros),
   * and the ids of all its rows. The code is opened only when a row is missing, so a keyed retry
   * of a resend that wrote its rows finishes without it. `stored`: the OTP's rows as read by the caller.
   */
  function rowsOf(
    record: OtpRecord,
    stored: Delivery[],
    resendId: string,
    at: Date,
    opened?: string,
  ): { missing: Delivery[]; ids: string[] } {
    if (record.resendCode === undefined) return { missing: [], ids: [] };
    const rows = new Map(stored.map((row) => [row.id, row]));
    const wanted = record.channels.flatMap((channel) => {
      const first = rows.get(otpDeliveryId(record.otpUuid, channel));
      return first ? [{ channel, first, id: otpResendDeliveryId(record.otpUuid, channel, resendId) }] : [];
    });
    const toWrite = wanted.filter(({ id }) => !rows.has(id));
    const code = toWrite.length > 0 ? (opened ?? openResendCode(record, record.resendCode)) : '';
    const missing = toWrite.map(({ channel, first, id }) =>
      // A test OTP's resends stay test messages (never a provider), whatever the client is now.
      queuedOtpRow(
        record,
        { id, channel, to: first.to, template: first.template, macros: first.macros, test: first.test },
        code,
        deps.keys.encryptionKey,
        at,
      ),
    );
    return { missing, ids: wanted.map(({ id }) => id) };
  }

  /**
   * Writes the rows still missing (upserts: a duplicate racing this one leaves existing ones as
   * they are) and queues every row of the resend. Only a resend whose id is new to the world
   * travels sealed; a keyed one may repeat an earlier job already done, so its worker reads the
   * row (and skips it if it was sent).
   */
  async function writeAndQueue(
    record: OtpRecord,
    stored: Delivery[],
    resendId: string,
    fresh: boolean,
    options: { priority?: number; code?: string } = {},
  ): Promise<void> {
    const { missing, ids } = rowsOf(record, stored, resendId, now(), options.code);
    await deps.deliveries.insertMany(missing);
    const sealed = new Map(fresh ? missing.map((row) => [row.id, sealDelivery(row, deps.keys.encryptionKey)]) : []);
    await Promise.all(
      ids.map(async (id) => {
        try {
          await deps.enqueue(id, sealed.get(id), options.priority);
        } catch (err) {
          deps.logger.warn({ err: (err as Error).message, deliveryId: id }, 'dispatch enqueue failed; left for the sweeper');
        }
      }),
    );
  }

  /**
   * A resend that could only go by SMS to a number outside SMS_ALLOWED_COUNTRIES (the OTP was made
   * before the list was set) can never arrive: 422 with the reason, as at creation, before any
   * budget is taken or resend recorded. Pure CPU on the rows just read.
   */
  function refuseUndeliverableSms(record: OtpRecord, rows: Delivery[], caller: { clientId: string; enterpriseId: string }): void {
    const addresses = Object.fromEntries(
      record.channels.flatMap((channel) => {
        const first = rows.find((row) => row.id === otpDeliveryId(record.otpUuid, channel));
        return first ? [[channel, first.to]] : [];
      }),
    );
    const undeliverable = undeliverableSms(addresses, record.fallback?.channel, deps.smsCountries, 'resend');
    if (undeliverable === undefined) return;
    deps.logger.warn(
      { otpUuid: record.otpUuid, clientId: caller.clientId, enterpriseId: caller.enterpriseId, country: undeliverable.country },
      undeliverable.logLine,
    );
    throw undeliverable.error;
  }

  return {
    /** 404 unknown or another client's; 409 not ACTIVE (or made before resends); 429 limits; 422 key reuse or SMS it may not send. */
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
        if (owner.requestHash !== requestHash) throw keyUsedWithAnotherRequest();
        resendId = keyedResendId(clientId, idempotencyKey, owner.createdAt);
        if (record.resends?.includes(resendId)) {
          // Committed earlier: finish what it may have left undone, send nothing new, use no limit.
          // An OTP ended since keeps no code and has nothing left to send: no read.
          if (record.resendCode !== undefined) await writeAndQueue(record, await deps.deliveries.findByRef(otpUuid), resendId, false);
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
      // The first messages' rows: their addresses are the resend's. Read once, here, and written
      // from below (a resend made in between adds rows of its own id only, never a first message).
      const stored = await deps.deliveries.findByRef(otpUuid);
      refuseUndeliverableSms(record, stored, command);
      // A code that cannot be sent again is refused before any budget is taken or resend recorded.
      const code = openResendCode(record, record.resendCode);
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
      await writeAndQueue(committed.record, stored, resendId, idempotencyKey === undefined, { priority, code });
      // A duplicate with the same key committed first: this request sent nothing of its own.
      if (!committed.added) return { replayed: true };
      return { limits };
    },
  };
}

export type OtpResendService = ReturnType<typeof createOtpResendService>;
