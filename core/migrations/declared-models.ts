import type { Schema } from 'mongoose';
import { activitySchema } from '../activity/activity.repository.js';
import { oidcRecordSchema } from '../auth/oidc-records.repository.js';
import { revokedTokenSchema } from '../auth/revoked-tokens.repository.js';
import { serverSecretSchema } from '../auth/server-secrets.repository.js';
import { clientSchema } from '../clients/clients.repository.js';
import { deliverySchema } from '../deliveries/deliveries.repository.js';
import { groupSchema } from '../groups/groups.repository.js';
import { notificationSchema } from '../notifications/notifications.repository.js';
import { idempotencySchema } from '../otp/idempotency.repository.js';
import { idempotencyRecordSchema } from '../idempotency/idempotency-records.repository.js';
import { pushSubscriptionSchema } from '../push/push-subscriptions.repository.js';
import { otpSchema } from '../otp/otps.repository.js';
import { passkeySchema } from '../passkeys/passkeys.repository.js';
import { outboxSchema } from '../providers/outbox.repository.js';
import { webhookEventSchema } from '../providers/webhook-events.repository.js';
import { loginStateSchema } from '../sign-in/login-states.repository.js';
import { signInFailuresSchema } from '../sign-in/sign-in-failures.repository.js';
import { templateSchema } from '../templates/templates.repository.js';
import { userSchema } from '../users/users.repository.js';

/**
 * Every model of the service under the name its repository registers it with: what the
 * start-up check and the migration command compare with the database. A repository's schema
 * is its collection's one declaration; a new model is added here too (the migrations test
 * checks that every collection the service writes is listed).
 */
export const DECLARED_MODELS: { name: string; schema: Schema<never> }[] = [
  { name: 'Activity', schema: activitySchema },
  { name: 'OidcRecord', schema: oidcRecordSchema },
  { name: 'RevokedToken', schema: revokedTokenSchema },
  { name: 'ServerSecret', schema: serverSecretSchema },
  { name: 'Client', schema: clientSchema },
  { name: 'Delivery', schema: deliverySchema },
  { name: 'Group', schema: groupSchema },
  { name: 'Notification', schema: notificationSchema },
  { name: 'OtpIdempotencyKey', schema: idempotencySchema },
  { name: 'IdempotencyRecord', schema: idempotencyRecordSchema },
  { name: 'Otp', schema: otpSchema },
  { name: 'Passkey', schema: passkeySchema },
  { name: 'OutboxMessage', schema: outboxSchema },
  { name: 'PushSubscription', schema: pushSubscriptionSchema },
  { name: 'WebhookEvent', schema: webhookEventSchema },
  { name: 'LoginState', schema: loginStateSchema },
  { name: 'SignInFailures', schema: signInFailuresSchema },
  { name: 'MessageTemplate', schema: templateSchema },
  { name: 'User', schema: userSchema },
] as never;
