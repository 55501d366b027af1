/** A browser's push subscription (RFC 8030) registered by a signed-in user, as the service keeps it. */
export interface PushSubscriptionRecord {
  subscriptionId: string;
  enterpriseId: string;
  userId: string;
  /** The push service's URL for this browser: a capability, shown only to its user. */
  endpoint: string;
  /** The browser's P-256 public key (base64url, uncompressed point): public by design. */
  p256dh: string;
  /** The 16-byte auth secret, encrypted with the server key (secret-box, bound to the subscription id). */
  authBox: string;
  /** When the browser said the subscription ends (PushSubscription.expirationTime), if it did. */
  expiresAt?: Date;
  createdAt: Date;
  updatedAt: Date;
}

/** What a browser's PushSubscription.toJSON() gives. */
export interface PushSubscriptionInput {
  endpoint: string;
  expirationTime?: number | null;
  keys: { p256dh: string; auth: string };
}
