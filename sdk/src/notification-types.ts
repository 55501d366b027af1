// Shapes of what the notification operations deliver. Servers may add fields; apps read these.

export interface NotificationAction {
  label: string;
  action: string;
  authlevel: number;
  /**
   * With number matching: whether answering with this action needs the number. When absent,
   * only the first action (approving) needs it; rejecting or reporting fraud never does. The
   * service lists it for every action.
   */
  requiresNumber?: boolean;
}

export interface NotificationText {
  lng: string;
  subject: string;
  message: string;
}

/** A pending notification, as GetNotifications lists it. */
export interface Notification {
  notification_uuid: string;
  ds_required: boolean;
  actions: NotificationAction[];
  body: NotificationText[];
  /** True when the user must type the two-digit number the enterprise shows (number matching). */
  number_match?: boolean;
  [field: string]: unknown;
}

/** Whether answering `notification` with `action` needs the matching number (see NotificationAction.requiresNumber). */
export function actionNeedsNumber(notification: Pick<Notification, 'number_match' | 'actions'>, action: string): boolean {
  if (!notification.number_match) return false;
  const found = notification.actions.find((a) => a.action === action);
  if (typeof found?.requiresNumber === 'boolean') return found.requiresNumber;
  return notification.actions[0]?.action === action;
}

/** A notification in its final state, as GetNotificationHistory lists it. */
export interface HistoryRecord {
  notification_uuid: string;
  status: 'UPDATED' | 'EXPIRED' | 'TAMPERED' | 'DISMISSED' | 'DISCARD' | 'CANCELLED';
  signing_status: 'Verified' | 'Failed' | 'NA';
  actions: NotificationAction[];
  body: NotificationText[];
  [field: string]: unknown;
}

export interface UpdateAcknowledgement {
  status_code: number;
  message: string;
  notification_uuid: string;
  is_ds_verified: boolean;
  /**
   * True when the notification already held this same answer (the service refused it as no longer
   * ACTIVE, naming that answer): typically a retry after the reply to the first attempt was lost.
   * `is_ds_verified` is then the stored answer's. Absent for a first answer.
   */
  repeated?: true;
}

/** Every event's payload has the form `response.ResponseData`. */
export interface EventPayload<Data> {
  response: { ResponseData: Data };
}
