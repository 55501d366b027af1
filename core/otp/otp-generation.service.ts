import { randomUUID } from 'node:crypto';
import type { Logger } from '../platform/logger/logger.js';
import type { DeliveriesRepository } from '../deliveries/deliveries.repository.js';
import { sealDelivery } from '../deliveries/delivery-envelope.js';
import { createUnansweredRows } from '../deliveries/unanswered-rows.js';
import { otpDeliveryId, type Channel, type Delivery } from '../deliveries/delivery.types.js';
import { NotFoundError, UnavailableError, ValidationError } from '../platform/errors/app-error.js';
import type { UsersRepository } from '../users/users.repository.js';
import { OTP_MACRO, findMissingMacros } from '../templates/template-macros.js';
import { IDEMPOTENCY_WINDOW_MS, type IdempotencyRepository } from './idempotency.repository.js';
import { digestOtp } from './otp-digest.js';
import { generateOtp } from './otp-generator.js';
import { fitsOtpFormat } from './otp-format-fit.js';
import type { OtpKeys } from '../crypto/otp-keys.js';
import type { GenerateOtpRequest } from './otp.types.js';
import type { OtpRecord, OtpsRepository } from './otps.repository.js';
import { resendCodeContext } from './otp-resend.service.js';
import { queuedOtpRow } from './otp-delivery-row.js';
import { openParkedCode } from './parked-code.js';
import { encryptSecret } from '../crypto/secret-box.js';
import { otpRequests } from '../platform/metrics/business-metrics.js';
import { isReachable } from '../users/user-reachability.js';
import { keyUsedWithAnotherRequest, requestFingerprint } from '../idempotency/request-fingerprint.js';
import { undeliverableSms } from './otp-sms-country.js';
import type { SmsCountries } from '../providers/sms-country-policy.js';

/**
 * What the generation needs to know about the template of a name that carries an enterprise's
 * messages (its own, else the shared one; never another enterprise's): its channel and the macros its
 * message will hold.
 */
export interface TemplateLookup {
  findTemplate(name: string, enterpriseId: string): Promise<{ channel: Channel; macros: readonly string[] } | undefined>;
}

export interface OtpGenerationDeps {
  otps: OtpsRepository;
  deliveries: DeliveriesRepository;
  idempotency: IdempotencyRepository;
  users: Pick<UsersRepository, 'findUser'>;
  templates: TemplateLookup;
  /**
   * Queues one delivery, with its row sealed when the row is new; failures are tolerated (the
   * sweeper re-enqueues QUEUED rows). `priority`: see core/platform/queues/dispatch-fairness.ts.
   */
  enqueue: (deliveryId: string, sealed?: string, priority?: number) => Promise<void>;
  keys: OtpKeys;
  logger: Logger;
  /** The deployment's SMS_ALLOWED_COUNTRIES (undefined: every country). */
  smsCountries?: SmsCountries;
  now?: () => Date;
}

export interface GenerateOtpCommand {
  clientId: string;
  /** The calling client's enterprise: the user is looked up there only. */
  enterpriseId: string;
  /** Sent by a test client: its messages go to the outbox with simulated receipts. */
  test?: boolean;
  /** A test client's fixed code for this user (its `testCodes`): sent instead of a random one. */
  fixedCode?: string;
  request: GenerateOtpRequest;
  /** Canonical JSON of the request body, for the idempotency check. */
  rawBody: unknown;
  idempotencyKey?: string;
  /** Abuse limits of this request, already under way; refused before anything is written. */
  admission?: Promise<unknown>;
  /** The BullMQ priority of the OTP's dispatch jobs once admitted (dispatch-fairness.ts); none: first-come-first-served. */
  dispatchPriority?: Promise<number | undefined>;
  /**
   * Epoch ms past which the request is refused rather than committed (its delivery rows are the
   * commit point): a caller that already gave up must not be sent a code it never saw a uuid for.
   */
  deadline?: number;
}

/** Seconds a refused caller is asked to wait before trying again. */
const RETRY_AFTER_SECONDS = 5;

const CHANNELS: Channel[] = ['SMS', 'EMAIL'];

export function createOtpGenerationService(deps: OtpGenerationDeps) {
  const now = deps.now ?? (() => new Date());
  const unanswered = createUnansweredRows(deps.deliveries, deps.logger);
  const parked = { deliveries: deps.deliveries, encryptionKey: deps.keys.encryptionKey, logger: deps.logger };

  /** Template existence (for this enterprise), channel match and macro completeness (all 422). */
  async function checkTemplates(request: GenerateOtpRequest, enterpriseId: string): Promise<void> {
    const wanted = CHANNELS.flatMap((channel) => {
      const name = request.channels[channel];
      return name === undefined ? [] : [{ field: `dispatchOptions.${channel}`, channel, name }];
    });
    const { fallback } = request;
    if (fallback) wanted.push({ field: `fallbackDispatchOptions.${fallback.channel}`, channel: fallback.channel, name: fallback.template });
    const used: string[] = [];
    for (const { field, channel, name } of wanted) {
      const template = await deps.templates.findTemplate(name, enterpriseId);
      // The look-up never returns another enterprise's template: it is answered as a name that does not exist.
      if (!template || template.channel !== channel) {
        throw new ValidationError(`${field}: template '${name}' does not exist for channel ${channel}`);
      }
      if (!template.macros.includes(OTP_MACRO)) {
        throw new ValidationError(`${field}: template '${name}' does not contain ${OTP_MACRO}`);
      }
      used.push(...template.macros);
    }
    const missing = findMissingMacros(used, request.dynamicMacros);
    if (missing.length > 0) throw new ValidationError(`dynamicMacros: missing values for ${missing.join(', ')}`);
  }

  /**
   * Writes a fresh OTP and its rows at once: its uuid is new, so neither can exist yet and neither
   * write waits for the other (one store round trip fewer before the answer). When either fails its
   * outcome is unknown (the store may have applied it and died before answering); the request will
   * be answered with an error, so the rows are ended, or the sweeper would send a code the caller
   * never got a uuid for (and should ending them fail too, the dispatch worker sends no row whose
   * OTP is missing). Resumed requests do not do this: their rows may belong to an earlier attempt
   * that was answered.
   */
  async function insertFresh(record: OtpRecord, rows: Delivery[]): Promise<void> {
    const [otp, written] = await Promise.allSettled([deps.otps.insert(record), deps.deliveries.insertNew(rows)]);
    if (otp.status === 'fulfilled' && written.status === 'fulfilled') return;
    await unanswered.cancel(rows.map((row) => row.id));
    throw otp.status === 'rejected' ? otp.reason : (written as PromiseRejectedResult).reason;
  }

  function rowsOf(
    stored: OtpRecord,
    addresses: Partial<Record<Channel, string>>,
    request: GenerateOtpRequest,
    code: string,
    test: boolean,
  ): Delivery[] {
    const at = now();
    return stored.channels.map((channel) =>
      queuedOtpRow(
        stored,
        {
          id: otpDeliveryId(stored.otpUuid, channel),
          channel,
          to: addresses[channel] as string,
          template: request.channels[channel] as string,
          macros: request.dynamicMacros,
          test,
        },
        code,
        deps.keys.encryptionKey,
        at,
      ),
    );
  }

  function refuseIfPastDeadline(deadline: number | undefined): void {
    if (deadline !== undefined && Date.now() > deadline) {
      throw new UnavailableError('Service unavailable: the request took too long; retry later', {
        retryAfterSeconds: RETRY_AFTER_SECONDS,
      });
    }
  }

  /**
   * Writes the OTP, its delivery rows and its jobs; every step is idempotent on the uuid.
   * `freshCode` is given when the uuid is new to this request (no Idempotency-Key): nothing can
   * resume it, so the code is not parked on the OTP record and needs no clearing afterwards, and
   * the record and rows are written at once. With a key, a retry must deliver the first attempt's
   * code, which it finds encrypted on the record until the delivery rows exist.
   */
  async function persistAndQueue(
    record: OtpRecord,
    addresses: Partial<Record<Channel, string>>,
    request: GenerateOtpRequest,
    freshCode: string | undefined,
    deadline: number | undefined,
    test: boolean,
    priority: number | undefined,
  ): Promise<void> {
    // Only rows that are certainly new travel sealed in their jobs (the worker then skips reading
    // them); a resumed request's rows may have been sent already, so its jobs make the worker read.
    const sealed = new Map<string, string>();
    if (freshCode !== undefined) {
      const rows = rowsOf(record, addresses, request, freshCode, test);
      refuseIfPastDeadline(deadline);
      await insertFresh(record, rows);
      for (const row of rows) {
        const envelope = sealDelivery(row, deps.keys.encryptionKey);
        if (envelope !== undefined) sealed.set(row.id, envelope);
      }
    } else {
      // A resumable uuid may exist already (a retried request): its stored code is the one to send.
      const stored = await deps.otps.insertIfAbsent(record);
      if (stored.codeEncrypted) {
        // Undefined: the code no longer opens but the rows were written (openParkedCode).
        const code = await openParkedCode(stored, stored.codeEncrypted, parked);
        if (code !== undefined) {
          refuseIfPastDeadline(deadline);
          await deps.deliveries.insertMany(rowsOf(stored, addresses, request, code, test));
        }
        // The rows are the commit point: from here on the answer is 200 whatever fails, because the
        // sweeper will send them. A code left parked on the record only lets a retry resume.
        await deps.otps
          .clearCode(stored.otpUuid)
          .catch((err: unknown) =>
            deps.logger.warn({ err: (err as Error).message }, 'parked OTP code not cleared; a retry will resume it'),
          );
      }
    }
    await Promise.all(
      record.channels.map(async (channel) => {
        const id = otpDeliveryId(record.otpUuid, channel);
        try {
          await deps.enqueue(id, sealed.get(id), priority);
        } catch (err) {
          // Accepted anyway: the row stays QUEUED and the sweeper enqueues it once Redis is back.
          deps.logger.warn({ err: (err as Error).message, deliveryId: id }, 'dispatch enqueue failed; left for the sweeper');
        }
      }),
    );
  }

  const requestHashOf = (rawBody: unknown) => requestFingerprint(rawBody);

  return {
    /**
     * The uuid this Idempotency-Key already answered for this very body, once that request has
     * finished: answered again with no new work and no limit used. Undefined otherwise (a new
     * key, another body, or a request still under way, which generate() resumes).
     */
    async replayOf(
      command: Pick<GenerateOtpCommand, 'clientId' | 'enterpriseId' | 'rawBody' | 'idempotencyKey'>,
    ): Promise<string | undefined> {
      if (command.idempotencyKey === undefined) return undefined;
      const claim = await deps.idempotency.find(command, command.idempotencyKey);
      if (!claim || claim.requestHash !== requestHashOf(command.rawBody)) return undefined;
      if (now().getTime() - claim.createdAt.getTime() > IDEMPOTENCY_WINDOW_MS) return undefined;
      const existing = await deps.otps.findForClient(claim.otpUuid, command.clientId);
      if (!existing || existing.codeEncrypted) return undefined;
      otpRequests.inc({ outcome: 'replayed' });
      return claim.otpUuid;
    },

    async generate(command: GenerateOtpCommand): Promise<{ otpUuid: string; replayed?: true }> {
      const { request, clientId, enterpriseId } = command;
      // Before anything is taken or written: a fixed code that does not fit is the caller's mistake.
      if (command.fixedCode !== undefined && !fitsOtpFormat(command.fixedCode, request.segments)) {
        throw new ValidationError(
          `Invalid field testCodes: the fixed code of user ${request.userId} does not fit the OTP format requested`,
        );
      }
      // Admission (rate limits), template checks and the user read run at once; their verdicts
      // still come in the documented order: 429, then 422, then 404.
      const [admitted, templates, found] = await Promise.allSettled([
        command.admission ?? Promise.resolve(),
        checkTemplates(request, enterpriseId),
        deps.users.findUser({ enterpriseId, userId: request.userId }),
      ]);
      if (admitted.status === 'rejected') throw admitted.reason;
      if (templates.status === 'rejected') throw templates.reason;
      if (found.status === 'rejected') throw found.reason;
      const user = found.value;
      // A blocked user is not found for enterprise calls either.
      if (!isReachable(user)) throw new NotFoundError('User not found');
      const addressOf = (channel: Channel, field: string) => {
        const address = channel === 'SMS' ? user.mobileNumber : user.emailId;
        if (!address) throw new ValidationError(`${field}: user has no ${channel === 'SMS' ? 'mobileNumber' : 'emailId'} registered`);
        return address;
      };
      const addresses: Partial<Record<Channel, string>> = {};
      for (const channel of CHANNELS) {
        if (request.channels[channel] !== undefined) addresses[channel] = addressOf(channel, `dispatchOptions.${channel}`);
      }
      const fallback = request.fallback && {
        ...request.fallback,
        to: addressOf(request.fallback.channel, `fallbackDispatchOptions.${request.fallback.channel}`),
      };
      const undeliverable = undeliverableSms(addresses, fallback?.channel, deps.smsCountries);
      if (undeliverable) {
        deps.logger.warn({ clientId, enterpriseId, country: undeliverable.country }, undeliverable.logLine);
        throw undeliverable.error;
      }

      let otpUuid: string = randomUUID();
      const createdAt = now();
      if (command.idempotencyKey !== undefined) {
        const requestHash = requestHashOf(command.rawBody);
        const claim = await deps.idempotency.claim({
          enterpriseId,
          clientId,
          key: command.idempotencyKey,
          requestHash,
          otpUuid,
          createdAt,
        });
        if (!claim.claimed) {
          if (claim.existing.requestHash !== requestHash) {
            throw keyUsedWithAnotherRequest();
          }
          otpUuid = claim.existing.otpUuid;
          const existing = await deps.otps.findForClient(otpUuid, clientId);
          // Finished earlier: answer the same uuid, send nothing again.
          if (existing && !existing.codeEncrypted) {
            otpRequests.inc({ outcome: 'replayed' });
            return { otpUuid, replayed: true };
          }
        }
      }

      const code = command.fixedCode ?? generateOtp(request.segments);
      const resumable = command.idempotencyKey !== undefined;
      const channels = CHANNELS.filter((c) => request.channels[c] !== undefined);
      const record: OtpRecord = {
        otpUuid,
        enterpriseId,
        clientId,
        userId: request.userId,
        digest: digestOtp(code, request.hashSpec, deps.keys),
        hashSpec: request.hashSpec,
        attempts: request.attempts,
        attemptsUsed: 0,
        status: 'ACTIVE',
        expiresAt: new Date(createdAt.getTime() + request.expiresIn * 1000),
        generateJwt: request.generateJwt,
        msgId: request.msgId,
        channels,
        ...(fallback ? { fallback } : {}),
        ...(resumable ? { codeEncrypted: encryptSecret(code, deps.keys.encryptionKey, otpUuid) } : {}),
        // Encrypted like the rows' copy, for resends while the OTP is ACTIVE (dropped when it ends).
        resendCode: encryptSecret(code, deps.keys.encryptionKey, resendCodeContext(otpUuid)),
        createdAt,
      };
      const priority = await command.dispatchPriority;
      await persistAndQueue(record, addresses, request, resumable ? undefined : code, command.deadline, command.test === true, priority);
      otpRequests.inc({ outcome: 'accepted' });
      return { otpUuid };
    },
  };
}

export type OtpGenerationService = ReturnType<typeof createOtpGenerationService>;
