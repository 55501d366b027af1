import { randomInt } from 'node:crypto';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import {
  CANCELLED_BEFORE_SENDING,
  EXPIRED_BEFORE_SENDING,
  REQUEST_NOT_ANSWERED,
  type DeliveriesRepository,
} from '../../core/deliveries/deliveries.repository.js';
import { openDelivery } from '../../core/deliveries/delivery-envelope.js';
import type { Delivery } from '../../core/deliveries/delivery.types.js';
import type { StillWantedCheck } from '../../core/deliveries/delivery-replay.types.js';
import { SendBacklogError, type SentOutcomes } from '../../core/deliveries/sent-outcomes.js';
import type { Logger } from '../../core/platform/logger/logger.js';
import {
  deliveryOutcomes,
  deliveryRenderFailures,
  NO_PROVIDER,
  providerSendDuration,
} from '../../core/platform/metrics/business-metrics.js';
import { decryptSecret } from '../../core/crypto/secret-box.js';
import type { DeliveryFailover, FailureCause } from '../../core/otp/otp-failover.js';
import { PermanentProviderError, RefusedBeforeProviderError } from '../../core/providers/provider-errors.js';
import type { Providers, SentMessage } from '../../core/providers/provider.types.js';
import { isRecipientFailure, type SmsRouting } from '../../core/providers/sms-routing.js';
import type { DispatchJobData } from '../../core/platform/queues/dispatch.queue.js';
import { getValidator } from '../../core/platform/schemas/schema-registry.js';
import { firstSchemaErrorLine } from '../../core/platform/schemas/schema-error-message.js';
import type { MessageTemplate, RenderedMessage } from '../../core/templates/template.types.js';
import { renderTemplate } from '../../core/templates/template-renderer.js';
import { DEFAULT_ENTERPRISE_ID } from '../../core/platform/tenancy/enterprise-id.js';
import { simulateReceipt, TEST_PROVIDER, type TestModeSend } from './test-mode-send.js';

export interface DispatchProcessorDeps {
  deliveries: DeliveriesRepository;
  /** Where sends are recorded: journaled before the job ends, on the row soon after. */
  sent: Pick<SentOutcomes, 'admitSend' | 'record' | 'journaled' | 'apply'>;
  /** The template of the name that carries the enterprise's messages: its own, else the shared one. */
  findTemplate: (name: string, enterpriseId: string) => Promise<MessageTemplate | undefined>;
  /**
   * The template read past this process's cache. The API checked the request against the template
   * as stored then, and the cached copy may be older (an edit made through another process).
   */
  rereadTemplate: (name: string, enterpriseId: string) => Promise<MessageTemplate | undefined>;
  /** The stored status of an OTP (undefined when its record is gone), read right before its message is sent. */
  otpStatus: (otpUuid: string) => Promise<string | undefined>;
  /**
   * Whether an activation message is still wanted (core/users: its user still pending, not
   * blocked, this code issue the current one), asked right before it is sent; undefined when it
   * is, else why not. Without it, activation messages are sent as queued.
   */
  activationStillWanted?: StillWantedCheck;
  providers: Providers;
  /** SMS through its accounts and their breakers; without it, SMS goes to `providers.sms` directly. */
  smsRouting?: SmsRouting;
  /** Sends an OTP's code again another way once its message ended FAILED; without it, nothing does. */
  failover?: Pick<DeliveryFailover, 'failOver'>;
  encryptionKey: Buffer;
  /** Where Twilio should post delivery receipts. */
  twilioStatusCallbackUrl?: string;
  /** Where test clients' messages go instead of a provider; without it they go to the real providers. */
  testMode?: TestModeSend;
  logger: Logger;
  now?: () => Date;
}

/** How long a job waits (plus up to as much again, spread) while sending is paused. */
const PAUSED_SEND_RETRY_MS = 2000;

export type DispatchResult = { state: 'SENT'; providerMessageId: string } | { state: 'SKIPPED'; reason: string };

/**
 * Why a row whose code no configured key opens cannot be sent: the key that sealed it was dropped
 * before `npm run reseal` reached the row. Said so that an operator knows what happened, never the
 * cipher's own words.
 */
const SEALED_WITH_DROPPED_KEY =
  'sealed content opens with no configured key: its OTP_ENCRYPTION_KEY was dropped before npm run reseal reached it';

function secretMacros(delivery: Delivery, key: Buffer): Record<string, string> {
  if (!delivery.secretMacros) return {};
  return JSON.parse(decryptSecret(delivery.secretMacros, key, delivery.id)) as Record<string, string>;
}

/** Rows written before enterprises carry none: theirs is `default`. */
const enterpriseOf = (delivery: Delivery) => delivery.enterpriseId ?? DEFAULT_ENTERPRISE_ID;

/** The delivery's message from `template`, or why there is none. */
function renderDelivery(
  template: MessageTemplate | undefined,
  delivery: Delivery,
  key: Buffer,
): { message: RenderedMessage } | { failure: string } {
  if (!template) return { failure: `template ${delivery.template} not found` };
  let secrets: Record<string, string>;
  try {
    secrets = secretMacros(delivery, key);
  } catch {
    return { failure: SEALED_WITH_DROPPED_KEY };
  }
  try {
    return { message: renderTemplate(template, { ...delivery.macros, ...secrets }) };
  } catch (err) {
    return { failure: `render failed: ${(err as Error).message}` };
  }
}

const isTest = (deps: DispatchProcessorDeps, delivery: Delivery) => delivery.test === true && deps.testMode !== undefined;

const providerOf = (deps: DispatchProcessorDeps, delivery: Delivery): string =>
  isTest(deps, delivery) ? TEST_PROVIDER : delivery.channel === 'SMS' ? deps.providers.sms.name : deps.providers.email.name;

/**
 * The counter's provider label for a message no provider had: `none`, so that the delivery alerts
 * do not count it against the channel's account; a test client's stays `test`, counted apart.
 */
const failedBeforeProvider = (deps: DispatchProcessorDeps, delivery: Delivery): string =>
  isTest(deps, delivery) ? TEST_PROVIDER : NO_PROVIDER;

/** A send that names the provider it went through (the breakers may pick the secondary SMS account). */
class ProviderSendError extends Error {
  constructor(
    override readonly cause: unknown,
    readonly provider: string,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

/**
 * The provider call, timed by outcome: its latency and error rate are what operators alert on. A
 * message refused before any provider was asked (RefusedBeforeProviderError) made no call to time.
 */
async function send(
  deps: DispatchProcessorDeps,
  delivery: Delivery,
  message: RenderedMessage,
): Promise<SentMessage & { provider: string }> {
  const started = process.hrtime.bigint();
  const observe = (provider: string, outcome: string) =>
    providerSendDuration.observe({ channel: delivery.channel, provider, outcome }, Number(process.hrtime.bigint() - started) / 1e9);
  const observeFailure = (provider: string, err: unknown) => {
    if (err instanceof RefusedBeforeProviderError) return;
    observe(provider, err instanceof PermanentProviderError ? 'permanent' : 'transient');
  };
  const otpUuid = delivery.kind === 'otp' ? delivery.refId : undefined;
  if (delivery.channel === 'SMS' && !isTest(deps, delivery) && deps.smsRouting) {
    const sms = { to: delivery.to, text: message.text, statusCallbackUrl: deps.twilioStatusCallbackUrl, otpUuid };
    const result = await deps.smsRouting.send(sms, delivery.route);
    if (result.ok) {
      observe(result.provider, 'ok');
      return { ...result.sent, provider: result.provider };
    }
    observeFailure(result.provider, result.error);
    throw new ProviderSendError(result.error, result.provider);
  }
  const provider = providerOf(deps, delivery);
  try {
    const sent = await callProvider(deps, delivery, message, otpUuid);
    observe(provider, 'ok');
    return { ...sent, provider };
  } catch (err) {
    observeFailure(provider, err);
    throw new ProviderSendError(err, provider);
  }
}

async function callProvider(
  deps: DispatchProcessorDeps,
  delivery: Delivery,
  message: RenderedMessage,
  otpUuid?: string,
): Promise<SentMessage> {
  const providers = isTest(deps, delivery) && deps.testMode ? { sms: deps.testMode.outbox, email: deps.testMode.outbox } : deps.providers;
  if (delivery.channel === 'SMS') {
    return providers.sms.send({ to: delivery.to, text: message.text, statusCallbackUrl: deps.twilioStatusCallbackUrl, otpUuid });
  }
  return providers.email.send({
    to: delivery.to,
    subject: message.subject ?? '',
    text: message.text,
    html: message.html,
    customArgs: { deliveryId: delivery.id },
    otpUuid,
  });
}

/**
 * Delivers one row: skips rows that already ended (a duplicate job), never sends after
 * `notAfter` (an expired OTP) nor for a cancelled OTP, renders, sends, records the outcome. Permanent failures end the
 * job at once; transient ones are rethrown for BullMQ's backoff.
 */
export function createDispatchProcessor(deps: DispatchProcessorDeps) {
  const validate = getValidator<DispatchJobData>('dispatch.deliver.json');
  const now = deps.now ?? (() => new Date());

  // An envelope that does not open (tampered with, or sealed under another key) is not trusted:
  // the row in MongoDB decides instead. So does one without the enterprise (sealed by a version
  // before templates had owners): its template is the row's enterprise's, never `default`'s own.
  const openSealed = async (sealed: string, deliveryId: string) => {
    try {
      const opened = openDelivery(sealed, deliveryId, deps.encryptionKey, now());
      return opened.enterpriseId === undefined ? deps.deliveries.findById(deliveryId) : opened;
    } catch (err) {
      deps.logger.warn({ deliveryId, err: (err as Error).message }, 'sealed delivery does not open; reading the row');
      return deps.deliveries.findById(deliveryId);
    }
  };

  // MongoDB far behind on recording sends: the job waits without sending and without using up
  // one of its attempts (they are for provider failures).
  const admitOrDelay = async (job: Job<DispatchJobData>, token: string | undefined) => {
    try {
      await deps.sent.admitSend();
    } catch (err) {
      if (!(err instanceof SendBacklogError) || token === undefined) throw err;
      deps.logger.warn({ deliveryId: job.data.deliveryId, err: err.message }, 'sending paused');
      await job.moveToDelayed(Date.now() + PAUSED_SEND_RETRY_MS + randomInt(PAUSED_SEND_RETRY_MS), token);
      throw new DelayedError();
    }
  };

  // A row that failed while it could still be sent keeps its encrypted code for an operator's
  // replay (the sweeper drops it when the window closes); an expired one, or one whose request
  // was never answered, has nothing to replay.
  // `through`: the provider that had the message and failed it; unset when none had it (expired,
  // cancelled, a template that did not render, refused by the deployment's policy), and then the
  // row names none: an operator filtering failures by provider sees only that provider's.
  // `ended`: the message is wanted by nobody any more (an activation its user can no longer use).
  const markFailed = async (delivery: Delivery, reason: string, attempt?: number, through?: string, ended = false) => {
    const unsendable = ended || reason === EXPIRED_BEFORE_SENDING || reason === REQUEST_NOT_ANSWERED;
    await deps.deliveries.markFailed(delivery.id, reason, {
      attempts: attempt,
      provider: through,
      keepSecrets: !unsendable,
    });
    deliveryOutcomes.inc({ channel: delivery.channel, provider: through ?? failedBeforeProvider(deps, delivery), state: 'FAILED' });
  };

  // Written before the row says FAILED: should this process die in between, the job's retry
  // finds the row still QUEUED and gets here again (the failover row's id makes that a no-op).
  const failOver = async (delivery: Delivery, provider: string, cause: FailureCause) => {
    if (!deps.failover) return;
    await deps.failover.failOver({ ...delivery, provider }, cause);
  };

  return async (job: Job<DispatchJobData>, token?: string): Promise<DispatchResult> => {
    if (!validate(job.data))
      throw new UnrecoverableError(`invalid dispatch payload: ${firstSchemaErrorLine(validate.errors, '(payload)')}`);
    const { deliveryId, sealed } = job.data;
    // This job's lock is the row's only writer while it runs (the job id is the delivery id), so
    // a plain read decides; outcomes are written conditionally on the row still being QUEUED.
    // The row sealed into a fresh OTP's job stands in for the read on the job's first run only:
    // a retried or stalled run may follow a recorded send, so it reads the journal, then the row.
    const trustSealed = sealed !== undefined && job.attemptsMade === 0 && !(job.stalledCounter > 0);
    if (!trustSealed) {
      // An earlier run may have sent it and journaled the send without the row showing it yet.
      // (The journal is read before the row: an entry is removed only after its row says SENT.)
      const journaled = await deps.sent.journaled(deliveryId);
      if (journaled) {
        await deps.sent.apply([journaled]);
        return { state: 'SKIPPED', reason: 'already SENT' };
      }
    }
    const delivery = trustSealed ? await openSealed(sealed, deliveryId) : await deps.deliveries.findById(deliveryId);
    if (!delivery) throw new UnrecoverableError(`unknown delivery ${deliveryId}`);
    if (delivery.state !== 'QUEUED') return { state: 'SKIPPED', reason: `already ${delivery.state}` };
    if (delivery.notAfter.getTime() <= now().getTime()) {
      await markFailed(delivery, EXPIRED_BEFORE_SENDING);
      return { state: 'SKIPPED', reason: 'expired' };
    }
    // Sends tried so far, counting runs cut short by a dead worker (BullMQ counts those apart).
    const attempt = job.attemptsMade + (job.stalledCounter ?? 0) + 1;

    const enterpriseId = enterpriseOf(delivery);
    let rendered = renderDelivery(await deps.findTemplate(delivery.template, enterpriseId), delivery, deps.encryptionKey);
    // A cached template may predate the edit the request was checked against: one fresh read before failing.
    if ('failure' in rendered)
      rendered = renderDelivery(await deps.rereadTemplate(delivery.template, enterpriseId), delivery, deps.encryptionKey);
    if ('failure' in rendered) {
      await markFailed(delivery, rendered.failure, attempt);
      deliveryRenderFailures.inc({ channel: delivery.channel });
      throw new UnrecoverableError(rendered.failure);
    }
    const { message } = rendered;

    await admitOrDelay(job, token);
    // The last moment a cancel can stop the message. A cancel that lands after this read finds the
    // message handed over: its row then ends SENT, as a send recorded after an end is the truth.
    const otpStatus = delivery.kind === 'otp' ? await deps.otpStatus(delivery.refId) : undefined;
    if (otpStatus === 'CANCELLED') {
      await markFailed(delivery, CANCELLED_BEFORE_SENDING, attempt);
      return { state: 'SKIPPED', reason: 'cancelled' };
    }
    // Deleting or blocking a user, or re-issuing their code, writes only the user: the messages
    // of the code it ended may still wait here (queued, held while Redis was down, swept), and
    // their code can activate nothing any more. Asked here, like an OTP's cancel.
    const activationEnded =
      delivery.kind === 'activation' && deps.activationStillWanted ? await deps.activationStillWanted(delivery, now()) : undefined;
    if (activationEnded !== undefined) {
      await markFailed(delivery, CANCELLED_BEFORE_SENDING, attempt, undefined, true);
      return { state: 'SKIPPED', reason: `cancelled: ${activationEnded.reason}` };
    }
    // An unexpired row whose OTP was never stored: its request wrote both at once, the OTP's write
    // failed and so did ending the rows. The caller got an error, so nobody holds a uuid to check.
    if (delivery.kind === 'otp' && otpStatus === undefined) {
      await markFailed(delivery, REQUEST_NOT_ANSWERED, attempt);
      return { state: 'SKIPPED', reason: 'request not answered' };
    }
    let sent: SentMessage & { provider: string };
    try {
      sent = await send(deps, delivery, message);
    } catch (thrown) {
      const { cause: err, provider } = thrown as ProviderSendError;
      if (err instanceof PermanentProviderError) {
        await failOver(delivery, provider, isRecipientFailure(err) ? 'recipient' : 'provider');
        await markFailed(delivery, err.reason, attempt, err instanceof RefusedBeforeProviderError ? undefined : provider);
        throw new UnrecoverableError(err.reason);
      }
      const reason = (err as Error).message;
      const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (lastAttempt) {
        await failOver(delivery, provider, 'provider');
        await markFailed(delivery, `gave up after ${attempt} attempts: ${reason}`, attempt, provider);
      } else await deps.deliveries.recordTransientError(deliveryId, reason, attempt);
      deps.logger.warn({ deliveryId, attempt, provider, err: reason }, 'transient delivery failure');
      // Its addresses are masked before BullMQ keeps it (worker-lifecycle.ts).
      throw err;
    }
    // Durable before the job ends; the row follows within milliseconds (sent-outcomes.ts). Should
    // this fail, the job's retry finds no record and sends again: at least once, never lost.
    await deps.sent.record({ deliveryId, providerMessageId: sent.providerMessageId, attempts: attempt, sentAt: now() });
    deliveryOutcomes.inc({ channel: delivery.channel, provider: sent.provider, state: 'SENT' });
    if (isTest(deps, delivery) && deps.testMode) await simulateReceipt(deps.testMode, delivery, sent, deps.logger);
    return { state: 'SENT', providerMessageId: sent.providerMessageId };
  };
}
