export const USER_STATUSES = ['CREATED', 'ONBOARDING', 'ACTIVE', 'DELETED'] as const;
export type UserStatus = (typeof USER_STATUSES)[number];

export interface UserActivation {
  /** HMAC of the activation code (never the code itself). */
  codeDigest: string;
  verificationKey: string;
  expiresAt: Date;
  failedAttempts: number;
  lockedAt?: Date;
}

export interface UserDevice {
  deviceId: string;
  publicKeyJwk: Record<string, unknown>;
  registeredAt: Date;
}

export interface User {
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
  createdAt: Date;
  updatedAt: Date;
}
