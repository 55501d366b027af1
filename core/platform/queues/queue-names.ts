/** Every BullMQ queue of the system; nothing else names a queue. */
export const QUEUE_NAMES = ['dispatch', 'enrollment', 'notification', 'notification-callback', 'notification-push'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];
