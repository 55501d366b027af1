import type { Connection } from 'mongoose';
import { pino } from 'pino';
import { createActivityRepository } from '../../core/activity/activity.repository.js';
import { createServerSecretsRepository } from '../../core/auth/server-secrets.repository.js';
import { createOidcRecordsRepository } from '../../core/auth/oidc-records.repository.js';
import type { ClientStores } from '../../core/clients/client-stores.js';
import { createClientsRepository } from '../../core/clients/clients.repository.js';
import { createDeliveriesRepository } from '../../core/deliveries/deliveries.repository.js';
import { createGroupsRepository } from '../../core/groups/groups.repository.js';
import { createNotificationsRepository } from '../../core/notifications/notifications.repository.js';
import { createNotificationsService } from '../../core/notifications/notifications.service.js';
import { createLogger } from '../../core/platform/logger/logger.js';
import { createOtpCancellationService } from '../../core/otp/otp-cancellation.service.js';
import { createOtpsRepository } from '../../core/otp/otps.repository.js';
import { createOutboxRepository } from '../../core/providers/outbox.repository.js';
import { createSignInFailuresRepository } from '../../core/sign-in/sign-in-failures.repository.js';
import { accountIdOf } from '../../core/sign-in/sign-in-users.js';
import type { TemplateStores } from '../../core/templates/templates.service.js';
import { createTemplatesRepository } from '../../core/templates/templates.repository.js';
import { createUserLifecycle } from '../../core/users/user-lifecycle.service.js';
import { createUsersRepository } from '../../core/users/users.repository.js';

/**
 * The admin CLI's composition root: its repositories and services, built once per run and handed
 * to the command. The CLI keeps no cached reads, so a change has nothing of its own to forget.
 */
export function composeCli(mongo: Connection) {
  const users = createUsersRepository(mongo);
  const activity = createActivityRepository(mongo);
  const oidcRecords = createOidcRecordsRepository(mongo);
  // Blocking from the CLI does what the admin route does. The CLI has no queue connection: the
  // callbacks of the notifications it discards are sent by the notification worker's sweep, which
  // queues every ended notification whose callback is still waiting.
  const notifications = createNotificationsService({
    repository: createNotificationsRepository(mongo),
    users,
    enqueueExpiry: () => Promise.resolve(),
    enqueueCallback: () => Promise.reject(new Error('the admin CLI queues no callbacks')),
    logger: createLogger({ level: 'silent', name: 'admin-cli' }),
    callbackPolicy: { allowLoopback: false, allowedNetworks: [] },
  });
  // The dispatch worker reads an OTP's status before each send, so a cancel needs no queue here.
  const otpCancellation = createOtpCancellationService({
    otps: createOtpsRepository(mongo),
    deliveries: createDeliveriesRepository(mongo),
    status: () => Promise.reject(new Error('the admin CLI shows no OTP')),
    logger: createLogger({ level: 'silent', name: 'admin-cli' }),
  });
  // A change whose activity entry the record refused is done; the warning (on stderr, apart from
  // the command's JSON) says the enrollment worker's sweep writes the entry.
  const logger = createLogger({ level: 'warn', name: 'admin-cli', destination: pino.destination({ dest: 2, sync: true }) });
  const clients: ClientStores = { clients: createClientsRepository(mongo), activity, lookup: { invalidate: () => undefined }, logger };
  const templates: TemplateStores = { templates: createTemplatesRepository(mongo), activity, cache: { forget: () => undefined }, logger };
  return {
    /** The database itself, for the commands on server secrets (signing keys). */
    connection: mongo,
    serverSecrets: createServerSecretsRepository(mongo),
    users,
    activity,
    logger,
    groups: createGroupsRepository(mongo),
    signInFailures: createSignInFailuresRepository(mongo),
    outbox: createOutboxRepository(mongo),
    clients,
    templates,
    userLifecycle: createUserLifecycle({
      users,
      activity,
      discardPendingNotifications: (ref) => notifications.discardPendingNotifications(ref),
      endSignIns: (ref) => oidcRecords.endOidcRecordsOfAccount(accountIdOf(ref), new Date()),
      cancelPendingOtps: (ref) => otpCancellation.cancelAllOfUser(ref),
      logger,
    }),
  };
}

export type CliServices = ReturnType<typeof composeCli>;
