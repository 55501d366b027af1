import type { Config } from '../../core/platform/config/config.js';
import { createDeliveriesRepository } from '../../core/deliveries/deliveries.repository.js';
import { sweepDeliveries } from '../../core/deliveries/delivery-sweeper.js';
import { createEarlyReceiptStore } from '../../core/deliveries/early-receipts.js';
import { createSentJournal } from '../../core/deliveries/sent-journal.js';
import { createSentOutcomes } from '../../core/deliveries/sent-outcomes.js';
import { startPeriodicTask } from '../../core/platform/lifecycle/periodic-task.js';
import { createManagedWorker, drainWorker, runManagedWorker } from '../../core/platform/lifecycle/worker-lifecycle.js';
import { openWorkerResources } from '../../core/platform/lifecycle/worker-resources.js';
import { prepareWorkerStore } from '../prepare-worker-store.js';
import { createShutdown } from '../../core/platform/lifecycle/shutdown.js';
import type { Logger } from '../../core/platform/logger/logger.js';
import type { RunningWorker } from '../../core/platform/lifecycle/worker-lifecycle.js';
import { otpKeysFromConfig } from '../../core/crypto/otp-keys.js';
import { createOtpsRepository } from '../../core/otp/otps.repository.js';
import { createResendCodeSweeper } from '../../core/otp/resend-code-sweeper.js';
import { createProviders } from '../../core/providers/providers.factory.js';
import { OutboxProvider } from '../../core/providers/outbox.provider.js';
import { createOutboxRepository } from '../../core/providers/outbox.repository.js';
import { createDeliveryReceipts } from '../../core/providers/delivery-receipts.service.js';
import { dispatchBackoffMs, enqueueDispatch, requeueDispatch } from '../../core/platform/queues/dispatch.queue.js';
import { deliveryFailoverOn } from '../../core/otp/otp-failover.js';
import { createSmsRouting } from '../../core/providers/sms-routing.js';
import { createTemplateCache } from '../../core/templates/template-cache.js';
import { createTemplatesRepository } from '../../core/templates/templates.repository.js';
import { activationStillWanted } from '../../core/users/activation-replay-check.js';
import { createUsersRepository } from '../../core/users/users.repository.js';
import { createDispatchProcessor } from './dispatch.processor.js';

export type { RunningWorker } from '../../core/platform/lifecycle/worker-lifecycle.js';

/** The dispatch worker and its delivery sweeper, ready and taking work. */
export async function startDispatchWorker(config: Config, logger: Logger, stopping?: AbortSignal): Promise<RunningWorker> {
  const log = logger.child({ worker: 'dispatch' });
  const keys = otpKeysFromConfig(config);
  const { mongo, workerRedis, redis, queues, closeSteps } = await openWorkerResources(
    config,
    log,
    prepareWorkerStore(keys.encryptionKey),
    stopping,
  );
  const deliveries = createDeliveriesRepository(mongo);
  const journal = createSentJournal(redis, config.queuePrefix);
  const otps = createOtpsRepository(mongo);
  const failover = deliveryFailoverOn({ deliveries, otps }, config, keys.encryptionKey, (id) => enqueueDispatch(queues.dispatch, id), log);
  // Receipts that came before their sends are applied wherever a send reaches its row.
  const receipts = createDeliveryReceipts({
    deliveries,
    journal,
    early: createEarlyReceiptStore(redis, config.queuePrefix),
    logger: log,
    failover,
  });
  const earlyReceipts = receipts.applyEarly;
  const sent = createSentOutcomes({ journal, deliveries, earlyReceipts, logger: log, maxBacklog: config.sentJournalMaxBacklog });
  const templates = createTemplateCache(createTemplatesRepository(mongo));
  const outboxMessages = createOutboxRepository(mongo);
  const providers = createProviders(config, outboxMessages, log);
  const smsRouting = createSmsRouting(providers.sms, providers.smsSecondary, config.providerBreaker, log);

  const worker = createManagedWorker({
    queue: 'dispatch',
    processor: createDispatchProcessor({
      deliveries,
      sent,
      findTemplate: (name, enterpriseId) => templates.find(name, enterpriseId),
      rereadTemplate: (name, enterpriseId) => templates.reread(name, enterpriseId),
      otpStatus: (otpUuid) => otps.statusOf(otpUuid),
      activationStillWanted: activationStillWanted(createUsersRepository(mongo)),
      providers,
      smsRouting,
      failover,
      encryptionKey: keys.encryptionKey,
      twilioStatusCallbackUrl: `${config.publicUrl}/webhooks/twilio/status`,
      testMode: { outbox: new OutboxProvider(outboxMessages, log), onReceipt: receipts.record },
      logger: log,
    }),
    connection: workerRedis,
    config,
    concurrency: config.concurrency.dispatch,
    logger: log,
    backoffStrategy: (attemptsMade, err) => dispatchBackoffMs(attemptsMade, err),
  });
  const sweepDeps = {
    deliveries,
    journal,
    earlyReceipts,
    enqueue: (id: string) => requeueDispatch(queues.dispatch, id),
    logger: log,
    graceMs: config.sweeperGraceMs,
  };
  const sweeper = startPeriodicTask('delivery sweep', () => sweepDeliveries(sweepDeps), config.sweeperIntervalMs, log);
  const dropResendCodes = createResendCodeSweeper(otps, log);
  const codeSweeper = startPeriodicTask('resend code sweep', () => dropResendCodes(), config.sweeperIntervalMs, log);
  await runManagedWorker(worker, log);
  return {
    shutdown: createShutdown(
      [
        { name: 'sweeper', run: () => sweeper.stop() },
        { name: 'resend code sweeper', run: () => codeSweeper.stop() },
        { name: 'dispatch jobs in flight', run: () => drainWorker(worker) },
        { name: 'sent outcomes', run: () => sent.close() },
        { name: 'SMS breakers', run: async () => smsRouting.close() },
        ...closeSteps,
      ],
      log,
      config.shutdownDeadlineMs,
    ),
  };
}
