export const USER_STATUSES = ['CREATED', 'ONBOARDING', 'ACTIVE', 'DELETED'] as const;
export type UserStatus = (typeof USER_STATUSES)[number];

/** Statuses in which a user may still activate (enrollment sets one of them). */
export const PENDING_STATUSES: readonly UserStatus[] = ['CREATED', 'ONBOARDING'];

export interface UserActivation {
  /** HMAC of the activation code (never the code itself). */
  codeDigest: string;
  /** The verification key, AES-GCM encrypted: it is sent again with a re-issued code. */
  verificationKeyEncrypted: string;
  /**
   * The code, AES-GCM encrypted, only until the enrollment job has written the activation
   * deliveries (their own encrypted copy); absent when the caller supplied the code.
   */
  codeEncrypted?: string;
  /** 1 at enrollment, +1 per admin re-issue; part of the job and delivery ids. */
  issue: number;
  expiresAt: Date;
  /**
   * Set by the activation sweep when it could not prepare this issue's messages (a code that no
   * longer decrypts): how often it failed, and when it may try again (a back-off, so one such
   * user is not retried on every pass). A re-issue replaces the activation, and these with it.
   */
  preparationFailures?: number;
  preparationRetryAt?: Date;
  /**
   * The Idempotency-Key claim of the admin re-issue that set this activation, written with it: a
   * retry resuming that claim finds the code issued and answers it instead of issuing another.
   */
  claimId?: string;
}

export interface UserDevice {
  deviceId: string;
  publicKeyJwk: { kty: 'EC'; crv: 'P-256'; x: string; y: string };
  registeredAt: Date;
}

export interface User {
  /** The enterprise (tenant) the user belongs to: the enrolling client's. */
  enterpriseId: string;
  userId: string;
  loginId: string;
  primaryGroup: string;
  secondaryGroups: string[];
  firstName: string;
  lastName: string;
  emailId?: string;
  mobileNumber?: string;
  status: UserStatus;
  sourceType: 'SVC' | 'SVC-AD';
  comments?: string;
  clientId: string;
  activation?: UserActivation;
  device?: UserDevice;
  server_bio_template_hash?: string;
  server_bio_template_hash_created_ts?: Date;
  server_bio_template_source?: string;
  activatedAt?: Date;
  /** Set by an admin: a blocked user cannot sign in and their user tokens are refused. */
  blocked?: { reason?: string; at: Date };
  createdAt: Date;
  updatedAt: Date;
}
