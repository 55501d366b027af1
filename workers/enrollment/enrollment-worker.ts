import type { Config } from '../../core/platform/config/config.js';
import { createActivityRepository } from '../../core/activity/activity.repository.js';
import { sweepOwedEntries } from '../../core/activity/owed-entries-sweeper.js';
import { createDeliveriesRepository } from '../../core/deliveries/deliveries.repository.js';
import { createManagedWorker, drainWorker, runManagedWorker, type RunningWorker } from '../../core/platform/lifecycle/worker-lifecycle.js';
import { openWorkerResources } from '../../core/platform/lifecycle/worker-resources.js';
import { prepareWorkerStore } from '../prepare-worker-store.js';
import { startPeriodicTask } from '../../core/platform/lifecycle/periodic-task.js';
import { sweepActivations } from '../../core/users/activation-sweeper.js';
import { sweepOwedActivity } from '../../core/users/owed-activity-sweeper.js';
import { createShutdown } from '../../core/platform/lifecycle/shutdown.js';
import type { Logger } from '../../core/platform/logger/logger.js';
import { otpKeysFromConfig } from '../../core/crypto/otp-keys.js';
import { enqueueDispatch } from '../../core/platform/queues/dispatch.queue.js';
import { createActivationDeliveries } from '../../core/users/activation-deliveries.service.js';
import { createUsersRepository } from '../../core/users/users.repository.js';
import { createClientsRepository } from '../../core/clients/clients.repository.js';
import { createGroupsRepository } from '../../core/groups/groups.repository.js';
import { createTemplatesRepository } from '../../core/templates/templates.repository.js';
import { passkeyChangeChecks } from '../../core/passkeys/passkey-activity.js';
import { createPasskeysRepository } from '../../core/passkeys/passkeys.repository.js';
import { createSignInFailuresRepository } from '../../core/sign-in/sign-in-failures.repository.js';
import { signInLockChangeChecks } from '../../core/sign-in/sign-in-lock-activity.js';
import { createSendActivationProcessor } from './send-activation.processor.js';

/** The enrollment worker: turns enrollment jobs into activation deliveries and dispatch jobs. */
export async function startEnrollmentWorker(config: Config, logger: Logger, stopping?: AbortSignal): Promise<RunningWorker> {
  const log = logger.child({ worker: 'enrollment' });
  const keys = otpKeysFromConfig(config);
  const { mongo, workerRedis, queues, closeSteps } = await openWorkerResources(
    config,
    log,
    prepareWorkerStore(keys.encryptionKey),
    stopping,
  );
  const users = createUsersRepository(mongo);
  const activationDeliveries = createActivationDeliveries({
    users,
    deliveries: createDeliveriesRepository(mongo),
    enqueueDispatch: (id, priority) => enqueueDispatch(queues.dispatch, id, priority),
    keys,
    activationAppUrl: config.activationAppUrl,
    logger: log,
  });
  if (!config.demoApprover && config.activationAppUrl.endsWith('/demo/approver/'))
    log.warn('activation links open the approver example app, which is off: set ACTIVATION_APP_URL to your app');

  const worker = createManagedWorker({
    queue: 'enrollment',
    processor: createSendActivationProcessor(activationDeliveries),
    connection: workerRedis,
    config,
    concurrency: config.concurrency.enrollment,
    logger: log,
  });
  const sweepDeps = { users, activationDeliveries, logger: log, graceMs: config.sweeperGraceMs };
  const sweeper = startPeriodicTask('activation sweep', () => sweepActivations(sweepDeps), config.sweeperIntervalMs, log);
  // The activity entries of user changes whose process did not write them.
  const activity = createActivityRepository(mongo);
  const owedDeps = {
    users,
    activity,
    changeChecks: {
      ...passkeyChangeChecks(createPasskeysRepository(mongo)),
      ...signInLockChangeChecks(createSignInFailuresRepository(mongo)),
    },
    logger: log,
    graceMs: config.sweeperGraceMs,
  };
  const owedSweeper = startPeriodicTask('owed activity sweep', () => sweepOwedActivity(owedDeps), config.sweeperIntervalMs, log);
  // The same for admin changes: every collection whose changes owe entries is registered here.
  const owingCollections = [
    createTemplatesRepository(mongo).owedActivity,
    createClientsRepository(mongo).owedActivity,
    createGroupsRepository(mongo).owedActivity,
  ];
  const adminDeps = { collections: owingCollections, activity, logger: log, graceMs: config.sweeperGraceMs };
  const adminSweeper = startPeriodicTask(
    'owed activity sweep of admin changes',
    () => sweepOwedEntries(adminDeps),
    config.sweeperIntervalMs,
    log,
  );
  await runManagedWorker(worker, log);
  return {
    shutdown: createShutdown(
      [
        { name: 'sweeper', run: () => sweeper.stop() },
        { name: 'owed activity sweeper', run: () => owedSweeper.stop() },
        { name: 'owed activity sweeper of admin changes', run: () => adminSweeper.stop() },
        { name: 'enrollment jobs in flight', run: () => drainWorker(worker) },
        ...closeSteps,
      ],
      log,
      config.shutdownDeadlineMs,
    ),
  };
}
