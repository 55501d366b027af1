/** Final states: once one is set it never changes again. */
export const FINAL_STATUSES = ['UPDATED', 'EXPIRED', 'TAMPERED', 'DISMISSED', 'DISCARD', 'CANCELLED'] as const;
export type FinalStatus = (typeof FINAL_STATUSES)[number];
export type NotificationStatus = 'ACTIVE' | FinalStatus;

export const SIGNING_STATUSES = ['Verified', 'Failed', 'NA'] as const;
export type SigningStatus = (typeof SIGNING_STATUSES)[number];

export interface NotificationBody {
  lng: string;
  subject: string;
  message: string;
}

export interface NotificationAction {
  label: string;
  action: string;
  authlevel: number;
  /**
   * With number matching: whether this answer needs the number. Absent: only the first action
   * (approving) does.
   */
  requiresNumber?: boolean;
}

/** Wrong matching numbers allowed; the last one ends the notification TAMPERED. */
export const MAX_NUMBER_ATTEMPTS = 3;

export interface Notification {
  notificationUuid: string;
  enterpriseId: string;
  /** The client that created it: its callback secret signs the callbacks. */
  clientId: string;
  userId: string;
  body: NotificationBody[];
  actions: NotificationAction[];
  dsRequired: boolean;
  /** The two digits the enterprise shows and the user must send back; absent without number matching. */
  number?: string;
  /** Wrong numbers sent so far. */
  numberAttempts: number;
  callbackUrl?: string;
  /**
   * With a callbackUrl: WAITING until the callback of the final state was delivered (SENT) or
   * given up after a day of retries (FAILED). The sweep re-queues WAITING callbacks of ended
   * notifications, so a callback whose enqueue failed is still sent.
   */
  callbackState?: 'WAITING' | 'SENT' | 'FAILED';
  status: NotificationStatus;
  action?: string;
  signingStatus: SigningStatus;
  isDsVerified: boolean;
  /** The device whose key was registered for the user when it was answered. */
  deviceId?: string;
  createdAt: Date;
  expiresAt: Date;
  /** When the final state was reached (answered, expired, cancelled, ...). */
  answeredAt?: Date;
}
