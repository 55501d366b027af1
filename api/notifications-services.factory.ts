import { createNotificationsRepository } from '../core/notifications/notifications.repository.js';
import { createNotificationsService, type NotificationsService } from '../core/notifications/notifications.service.js';
import { enqueueCallback, enqueueExpiry } from '../core/platform/queues/notification.queue.js';
import { enqueuePushFanout } from '../core/platform/queues/push.queue.js';
import { createUsersRepository, type UsersRepository } from '../core/users/users.repository.js';
import type { ServiceContext } from './service-context.js';

export interface NotificationsServices {
  notifications: NotificationsService;
  users: Pick<UsersRepository, 'findUser'>;
}

/** Wires the notification service to this process's stores and queues. */
export function createNotificationsServices(ctx: ServiceContext): NotificationsServices {
  const users = createUsersRepository(ctx.mongo);
  const notifications = createNotificationsService({
    repository: createNotificationsRepository(ctx.mongo, {
      onEnded: (uuids) => void ctx.notificationEnds.publish(uuids),
      onEndedRecord: (n) =>
        void ctx.userEvents.publish(n.enterpriseId, n.userId, { type: 'ended', notification_uuid: n.notificationUuid, status: n.status }),
    }),
    onCreated: (n) =>
      void ctx.userEvents.publish(n.enterpriseId, n.userId, {
        type: 'created',
        notification_uuid: n.notificationUuid,
        status: n.status,
        expires_at: n.expiresAt.toISOString(),
      }),
    users,
    enqueueExpiry: (uuid, expiresAt) => enqueueExpiry(ctx.queues.notification, uuid, expiresAt),
    enqueueCallback: (uuid) => enqueueCallback(ctx.queues['notification-callback'], uuid),
    enqueuePush: (uuid) => enqueuePushFanout(ctx.queues['notification-push'], uuid),
    logger: ctx.logger,
    callbackPolicy: ctx.config.notifications.callbackAddresses,
  });
  return { notifications, users };
}
