import { createActivityRepository } from '../core/activity/activity.repository.js';
import { createOidcRecordsRepository } from '../core/auth/oidc-records.repository.js';
import { createRevocationChecks } from '../core/auth/revocation-checks.js';
import { createTokenSessionChecks } from '../core/auth/token-session-checks.js';
import { createRevokedTokensRepository } from '../core/auth/revoked-tokens.repository.js';
import { createClientAuthenticationLimits } from '../core/clients/client-authentication-limits.js';
import { createClientLookup, type ClientLookup } from '../core/clients/client-lookup.cache.js';
import type { ClientStores } from '../core/clients/client-stores.js';
import { createClientsRepository } from '../core/clients/clients.repository.js';
import type { SigningKeyRotationStores } from './routes/admin-signing-keys.routes.js';
import { signingKeyStartTime } from '../core/platform/metrics/business-metrics.js';
import { createServerSecretsRepository } from '../core/auth/server-secrets.repository.js';
import { followRotation } from '../core/auth/signing-key-changes.js';
import { createScheduledRotation, type ScheduledRotation } from '../core/auth/signing-key-rotation-schedule.js';
import { createRotationUpkeep } from '../core/auth/signing-key-rotation-upkeep.js';
import { createStoredSigningKeyRing, readKeyChains, type SigningKeysCache } from '../core/auth/signing-key.service.js';
import { createVerificationKeySet } from '../core/auth/verification-key-set.js';
import { otpKeysFromConfig } from '../core/crypto/otp-keys.js';
import { createGroupsRepository } from '../core/groups/groups.repository.js';
import { createDeliveriesRepository } from '../core/deliveries/deliveries.repository.js';
import { createDeliveryReplay, type DeliveryReplay } from '../core/deliveries/delivery-replay.js';
import { createEarlyReceiptStore } from '../core/deliveries/early-receipts.js';
import { createSentJournal } from '../core/deliveries/sent-journal.js';
import { createNotificationsRepository } from '../core/notifications/notifications.repository.js';
import { createNotificationsService, type NotificationsService } from '../core/notifications/notifications.service.js';
import { createUserEventOutbox, createdEvent, endedEvent } from '../core/notifications/user-event-outbox.js';
import { createIdempotencyRepository } from '../core/otp/idempotency.repository.js';
import { createIdempotencyRecordsRepository } from '../core/idempotency/idempotency-records.repository.js';
import { createIdempotentRequests, type IdempotentRequests } from '../core/idempotency/idempotent-requests.js';
import { createOtpCancellationService } from '../core/otp/otp-cancellation.service.js';
import { deliveryFailoverOn } from '../core/otp/otp-failover.js';
import { createOtpGenerationService } from '../core/otp/otp-generation.service.js';
import { createOtpJwtSigner } from '../core/otp/otp-jwt.js';
import { createEnterpriseApiLimits, type EnterpriseApiLimits } from '../core/platform/throttling/enterprise-api-limits.js';
import { otpStillWanted } from '../core/otp/otp-replay-check.js';
import { createOtpResendService } from '../core/otp/otp-resend.service.js';
import { createOtpValidationService } from '../core/otp/otp-validation.service.js';
import { createOtpsRepository } from '../core/otp/otps.repository.js';
import { createPasskeySignIn } from '../core/passkeys/passkey-sign-in.service.js';
import { createPasskeysRepository } from '../core/passkeys/passkeys.repository.js';
import { createWorkAfterAnswers, type WorkAfterAnswers } from '../core/platform/lifecycle/work-after-answers.js';
import { signIns } from '../core/platform/metrics/business-metrics.js';
import { createTemplateMacroLookup } from '../core/templates/template-macro-lookup.js';
import { enqueueEnrollment } from '../core/platform/queues/enrollment.queue.js';
import { enqueueDispatch, requeueDispatch } from '../core/platform/queues/dispatch.queue.js';
import { enqueueCallback, enqueueExpiry } from '../core/platform/queues/notification.queue.js';
import { enqueuePushFanout } from '../core/platform/queues/push.queue.js';
import type { RecordDeliveryReceipt } from '../core/providers/delivery-receipt.types.js';
import { createDeliveryReceipts } from '../core/providers/delivery-receipts.service.js';
import { createOutboxRepository } from '../core/providers/outbox.repository.js';
import { createWebhookEventsRepository } from '../core/providers/webhook-events.repository.js';
import { createPushSubscriptionsRepository } from '../core/push/push-subscriptions.repository.js';
import { createPushSubscriptionsService, type PushSubscriptionsService } from '../core/push/push-subscriptions.service.js';
import { createVapidKeysCache, type VapidKeysCache } from '../core/push/vapid-keys.js';
import { createLoginLimits } from '../core/sign-in/login-rate-limits.js';
import { createSignInStartLimits, type SignInStartLimits } from '../core/sign-in/sign-in-start-limits.js';
import { createLoginStatesRepository } from '../core/sign-in/login-states.repository.js';
import { createLoginService } from '../core/sign-in/login.service.js';
import { endSignInLock } from '../core/sign-in/sign-in-lock-activity.js';
import { createSignInFailuresRepository } from '../core/sign-in/sign-in-failures.repository.js';
import { accountIdOf } from '../core/sign-in/sign-in-users.js';
import { createTemplateCache, type TemplateCache } from '../core/templates/template-cache.js';
import type { TemplateStores } from '../core/templates/templates.service.js';
import { createTemplatesRepository } from '../core/templates/templates.repository.js';
import { createActivationDeliveries } from '../core/users/activation-deliveries.service.js';
import { activationStillWanted } from '../core/users/activation-replay-check.js';
import { createActivationThrottle } from '../core/users/activation-throttle.js';
import { createActivationService } from '../core/users/activation.service.js';
import { createEnrollmentService } from '../core/users/enrollment.service.js';
import { createFaceAnalyzerClient } from '../core/users/face-analyzer.client.js';
import { createUserLifecycle, type UserLifecycle } from '../core/users/user-lifecycle.service.js';
import { createUserUpdateService } from '../core/users/user-update.service.js';
import { createUsersRepository } from '../core/users/users.repository.js';
import { tokenIdentity, type AuthServerStores } from './auth-server/auth-server.js';
import type { BearerStores } from './middleware/bearer-auth.middleware.js';
import type { UserTokenStores } from './middleware/user-token-auth.middleware.js';
import type { InteractionServices } from './auth-server/interaction.routes.js';
import type { OtpRouteServices } from './routes/otp.routes.js';
import type { UsersRouteServices } from './routes/users.routes.js';
import type { ServiceContext } from './service-context.js';

/** The API process's repositories, each built once here and handed to whoever needs it. */
export function createApiRepositories(ctx: ServiceContext) {
  const notifications = createNotificationsRepository(ctx.mongo, {
    onEnded: (uuids) => void ctx.notificationEnds.publish(uuids),
    // Called only after the write that marked the event due, so the outbox exists by then.
    onEndedRecord: (n) => void userEventOutbox.send(n, endedEvent(n)),
  });
  const userEventOutbox = createUserEventOutbox({
    repository: notifications,
    append: (enterpriseId, userId, event) => ctx.userEvents.publish(enterpriseId, userId, event),
    logger: ctx.logger,
  });
  return {
    notifications,
    /** Appends notification changes' events to their users' streams, at least once. */
    userEventOutbox,
    users: createUsersRepository(ctx.mongo),
    groups: createGroupsRepository(ctx.mongo),
    activity: createActivityRepository(ctx.mongo),
    deliveries: createDeliveriesRepository(ctx.mongo),
    otps: createOtpsRepository(ctx.mongo),
    idempotency: createIdempotencyRepository(ctx.mongo),
    idempotencyRecords: createIdempotencyRecordsRepository(ctx.mongo),
    passkeys: createPasskeysRepository(ctx.mongo),
    pushSubscriptions: createPushSubscriptionsRepository(ctx.mongo),
    signInFailures: createSignInFailuresRepository(ctx.mongo),
    loginStates: createLoginStatesRepository(ctx.mongo),
    clients: createClientsRepository(ctx.mongo),
    templates: createTemplatesRepository(ctx.mongo),
    oidcRecords: createOidcRecordsRepository(ctx.mongo),
    revokedTokens: createRevokedTokensRepository(ctx.mongo),
    outbox: createOutboxRepository(ctx.mongo),
    webhookEvents: createWebhookEventsRepository(ctx.mongo),
  };
}

export type ApiRepositories = ReturnType<typeof createApiRepositories>;

/** Everything the routes are given: the repositories and the services built on them. */
export interface ApiServices {
  repositories: ApiRepositories;
  /** This process's cached client reads: token checks, allow-lists, CORS, the authorization server. */
  clientLookup: ClientLookup;
  /** The enterprise routes' bearer check: the client lookup, the verification keys and the revocation checks. */
  bearer: BearerStores;
  clients: ClientStores;
  templateCache: TemplateCache;
  templates: TemplateStores;
  userTokens: UserTokenStores;
  authServer: AuthServerStores;
  /** Rotating the token signing keys (admin API): the store, and this process's key ring to follow at once. */
  signingKeyRotation: SigningKeyRotationStores;
  /** The rotation of the signing keys on schedule (SIGNING_KEY_ROTATION_DAYS), when set: started and stopped with the process. */
  scheduledRotation: ScheduledRotation | undefined;
  otp: OtpRouteServices;
  /** Abuse limits of the enterprise API (OTP generation and validation, approval notifications), shared by every API instance through Redis. */
  limits: EnterpriseApiLimits;
  signIn: Omit<InteractionServices, 'logger'>;
  /** Work requests left running after their answers (login codes): the shutdown waits for it before closing the stores. */
  afterAnswers: WorkAfterAnswers;
  users: UsersRouteServices;
  userLifecycle: UserLifecycle;
  /** The Idempotency-Key of the creating requests other than OTP's (notifications, admin creations). */
  idempotent: IdempotentRequests;
  notifications: NotificationsService;
  push: { subscriptions: PushSubscriptionsService; vapidKeys: VapidKeysCache };
  deliveryReplay: DeliveryReplay;
  deliveryReceipts: RecordDeliveryReceipt;
}

/**
 * The API process's composition root: builds every repository and service once, from the
 * process's context (connections, config, queues), so no route builds its own.
 */
export function composeApi(ctx: ServiceContext): ApiServices {
  const repositories = createApiRepositories(ctx);
  const clientLookup = createClientLookup(repositories.clients);
  const templateCache = createTemplateCache(repositories.templates);
  const serverSecrets = createServerSecretsRepository(ctx.mongo);
  const signingKeyRing = createStoredSigningKeyRing(ctx.mongo, ctx.config, otpKeysFromConfig(ctx.config).encryptionKey, {
    // Each read also writes a rotation's entry its process died before writing, and deletes rotations long removed.
    afterRead: createRotationUpkeep({ activity: repositories.activity, secrets: serverSecrets, logger: ctx.logger }),
    onReadError: (err) => ctx.logger.warn({ err }, 'signing keys could not be read again; the keys read before stay in use'),
    onKeys: (keys) => {
      signingKeyStartTime.reset();
      if (keys.tokensSince !== undefined) signingKeyStartTime.set({ alg: keys.tokens.alg }, keys.tokensSince / 1000);
    },
  });
  const signingKeys = signingKeyRing.current;
  // A rotation stored by another process or the CLI is read at once, not at the next periodic read.
  const readKeysAgain = () =>
    signingKeyRing.reload().catch((err: unknown) => ctx.logger.warn({ err }, 'signing keys could not be read again after a change notice'));
  ctx.signingKeyChanges
    .listen(() => void readKeysAgain())
    .catch((err: unknown) =>
      ctx.logger.warn({ err }, 'signing key changes: not subscribed (yet); rotations reach this process at its periodic reads'),
    );
  // One for the process: every token check shares what it learns and its budget of store reads.
  const verificationKeys = createVerificationKeySet(signingKeyRing);
  const revocations = createRevocationChecks(repositories.revokedTokens, ctx.config.tokenRevocationCheckSeconds * 1000);
  const otp = composeOtp(ctx, repositories, templateCache, signingKeys);
  const notifications = composeNotifications(ctx, repositories);
  const userLifecycle = createUserLifecycle({
    users: repositories.users,
    activity: repositories.activity,
    discardPendingNotifications: (ref) => notifications.discardPendingNotifications(ref),
    endSignIns: (ref) => repositories.oidcRecords.endOidcRecordsOfAccount(accountIdOf(ref), new Date()),
    cancelPendingOtps: (ref) => otp.cancellation.cancelAllOfUser(ref),
    logger: ctx.logger,
  });
  const { users, clients, templates, activity, oidcRecords, revokedTokens } = repositories;
  const afterAnswers = createWorkAfterAnswers();
  const idempotent = createIdempotentRequests({
    records: repositories.idempotencyRecords,
    encryptionKey: otpKeysFromConfig(ctx.config).encryptionKey,
    retentionMs: ctx.config.idempotency.retentionSeconds * 1000,
    secretReplayMs: ctx.config.idempotency.secretReplaySeconds * 1000,
    logger: ctx.logger,
  });
  const signingKeyRotation: SigningKeyRotationStores = {
    connection: ctx.mongo,
    settings: ctx.config,
    encryptionKey: otpKeysFromConfig(ctx.config).encryptionKey,
    secrets: serverSecrets,
    activity,
    logger: ctx.logger,
    ring: signingKeyRing,
    changes: ctx.signingKeyChanges,
  };
  const signInStartLimits = createSignInStartLimits(ctx.redis, ctx.config.queuePrefix, ctx.config.login.startsPerIp, ctx.logger);
  return {
    repositories,
    clientLookup,
    bearer: { clients: clientLookup, verificationKeys, revocations },
    clients: { clients, activity, lookup: clientLookup, logger: ctx.logger },
    templateCache,
    templates: { templates, activity, cache: templateCache, logger: ctx.logger },
    // One for the process, like the revocation checks: a session's answer serves every app's tokens.
    userTokens: {
      oidcRecords,
      clients: clientLookup,
      users,
      sessions: createTokenSessionChecks(oidcRecords, ctx.config.tokenRevocationCheckSeconds * 1000),
    },
    authServer: {
      users,
      clientLookup,
      oidcRecords,
      revokedTokens,
      signingKeys,
      verificationKeys,
      revocations,
      clientAuthenticationLimits: createClientAuthenticationLimits(ctx.redis, ctx.config.queuePrefix, ctx.config.clientAuthentication),
      signInStartLimits,
    },
    signingKeyRotation,
    limits: createEnterpriseApiLimits(ctx.redis, ctx.config.queuePrefix, ctx.config.rateLimits),
    scheduledRotation:
      ctx.config.signingKeyRotationDays > 0
        ? createScheduledRotation({
            stores: signingKeyRotation,
            readChains: () => readKeyChains(ctx.mongo, ctx.config, signingKeyRotation.encryptionKey),
            periodDays: ctx.config.signingKeyRotationDays,
            afterRotation: () => followRotation(signingKeyRing, ctx.signingKeyChanges, ctx.logger),
            logger: ctx.logger,
          })
        : undefined,
    otp,
    signIn: composeSignIn(ctx, repositories, otp, afterAnswers, signInStartLimits),
    afterAnswers,
    users: composeUsers(ctx, repositories, userLifecycle, idempotent),
    userLifecycle,
    idempotent,
    notifications,
    push: composePush(ctx, repositories),
    deliveryReplay: composeDeliveryReplay(ctx, repositories),
    deliveryReceipts: composeDeliveryReceipts(ctx, repositories),
  };
}

function composeOtp(
  ctx: ServiceContext,
  repositories: ApiRepositories,
  templateCache: TemplateCache,
  signingKeys: SigningKeysCache,
): OtpRouteServices {
  const { otps, deliveries, idempotency, users } = repositories;
  const keys = otpKeysFromConfig(ctx.config);
  const validation = createOtpValidationService({
    otps,
    deliveries,
    sentJournal: createSentJournal(ctx.redis, ctx.config.queuePrefix),
    keys,
    signOtpJwt: createOtpJwtSigner(async () => (await signingKeys()).tokens, tokenIdentity(ctx.config.publicUrl).issuer),
  });
  return {
    generation: createOtpGenerationService({
      otps,
      deliveries,
      idempotency,
      users,
      templates: createTemplateMacroLookup(templateCache),
      enqueue: ctx.dispatch.enqueue,
      keys,
      logger: ctx.logger,
      smsCountries: ctx.config.smsAllowedCountries,
    }),
    validation,
    cancellation: createOtpCancellationService({ otps, deliveries, status: validation.status, logger: ctx.logger }),
    resend: createOtpResendService({
      otps,
      deliveries,
      idempotency,
      enqueue: ctx.dispatch.enqueue,
      keys,
      logger: ctx.logger,
      smsCountries: ctx.config.smsAllowedCountries,
    }),
  };
}

/** The sign-in pages: login codes through the OTP pipeline, passkeys; every outcome is counted for dashboards. */
function composeSignIn(
  ctx: ServiceContext,
  repositories: ApiRepositories,
  otp: Pick<OtpRouteServices, 'generation' | 'validation'>,
  afterAnswers: WorkAfterAnswers,
  startLimits: SignInStartLimits,
): Omit<InteractionServices, 'logger'> {
  const { users, loginStates: states } = repositories;
  const limits = createLoginLimits(ctx.redis, ctx.config.queuePrefix, ctx.config.login);
  const login = createLoginService({
    users,
    states,
    limits,
    failures: repositories.signInFailures,
    activity: repositories.activity,
    maxFailures: ctx.config.login.maxFailures,
    userStepFloorMs: ctx.config.login.userStepFloorMs,
    codeTtlSeconds: ctx.config.login.codeTtlSeconds,
    otp: {
      generate: (command) => otp.generation.generate(command),
      validate: (otpUuid, clientId, code) => otp.validation.validate(otpUuid, clientId, code),
    },
    logger: ctx.logger,
    smsCountries: ctx.config.smsAllowedCountries,
  });
  const countedLogin: typeof login = {
    ...login,
    verify: async (...args) => {
      const outcome = await login.verify(...args);
      signIns.inc({ outcome: outcome.kind.replace(/-/g, '_') });
      return outcome;
    },
  };
  const passkeySignIn = createPasskeySignIn({
    passkeys: repositories.passkeys,
    users,
    limits,
    config: ctx.config.passkeys,
    signInOrigin: new URL(ctx.config.publicUrl).origin,
    logger: ctx.logger,
  });
  const passkeys: InteractionServices['passkeys'] = {
    rpId: ctx.config.passkeys.rpId,
    verify: async (...args) => {
      const outcome = await passkeySignIn.verify(...args);
      signIns.inc({ outcome: `passkey_${outcome.kind.replace(/-/g, '_')}` });
      return outcome;
    },
  };
  return {
    login: countedLogin,
    states,
    limits,
    passkeys,
    afterAnswers,
    startLimits,
    defaultLocale: ctx.config.signInDefaultLocale,
    codeTtlSeconds: ctx.config.login.codeTtlSeconds,
  };
}

function composeUsers(
  ctx: ServiceContext,
  repositories: ApiRepositories,
  lifecycle: UserLifecycle,
  idempotent: IdempotentRequests,
): UsersRouteServices {
  const { users, activity } = repositories;
  const keys = otpKeysFromConfig(ctx.config);
  const throttle = createActivationThrottle(ctx.redis, ctx.config.queuePrefix, ctx.config.activation);
  const enrollment = createEnrollmentService({
    users,
    groups: repositories.groups,
    enqueueEnrollment: (data, priority) => enqueueEnrollment(ctx.queues.enrollment, data, priority),
    activationDeliveries: createActivationDeliveries({
      users,
      deliveries: repositories.deliveries,
      enqueueDispatch: (id, priority) => ctx.dispatch.enqueue(id, undefined, priority),
      keys,
      activationAppUrl: ctx.config.activationAppUrl,
      logger: ctx.logger,
    }),
    activity,
    faceAnalyzer: ctx.config.faceAnalyzer ? createFaceAnalyzerClient(ctx.config.faceAnalyzer, ctx.logger) : undefined,
    keys,
    codeTtlSeconds: ctx.config.activation.codeTtlSeconds,
    logger: ctx.logger,
  });
  return {
    users,
    lifecycle,
    idempotent,
    update: createUserUpdateService({ users, groups: repositories.groups, activity, logger: ctx.logger }),
    throttle,
    enrollment,
    activation: createActivationService({
      users,
      throttle,
      queueActivation: enrollment.queueActivation,
      activity,
      endSignInLock: (ref) =>
        endSignInLock(
          { users, activity, failures: repositories.signInFailures, logger: ctx.logger },
          ref,
          { type: 'user' },
          'activation completed',
        ),
      keys,
      codeTtlSeconds: ctx.config.activation.codeTtlSeconds,
      failureFloorMs: ctx.config.activation.failureFloorMs,
      logger: ctx.logger,
      smsCountries: ctx.config.smsAllowedCountries,
    }),
  };
}

function composeNotifications(ctx: ServiceContext, repositories: ApiRepositories): NotificationsService {
  return createNotificationsService({
    repository: repositories.notifications,
    onCreated: (n) => void repositories.userEventOutbox.send(n, createdEvent(n)),
    users: repositories.users,
    enqueueExpiry: (uuid, expiresAt) => enqueueExpiry(ctx.queues.notification, uuid, expiresAt),
    enqueueCallback: (uuid) => enqueueCallback(ctx.queues['notification-callback'], uuid),
    enqueuePush: (uuid) => enqueuePushFanout(ctx.queues['notification-push'], uuid),
    logger: ctx.logger,
    callbackPolicy: ctx.config.notifications.callbackAddresses,
  });
}

function composePush(ctx: ServiceContext, repositories: ApiRepositories): ApiServices['push'] {
  const { encryptionKey } = otpKeysFromConfig(ctx.config);
  return {
    subscriptions: createPushSubscriptionsService({
      repository: repositories.pushSubscriptions,
      encryptionKey,
      endpointPolicy: ctx.config.push.endpointAddresses,
      maxPerUser: ctx.config.push.subscriptionsPerUser,
    }),
    vapidKeys: createVapidKeysCache(ctx.mongo, ctx.config.push, encryptionKey),
  };
}

/** The operators' replay of failed deliveries: each kind's owner says whether its message is still wanted. */
function composeDeliveryReplay(ctx: ServiceContext, repositories: ApiRepositories): DeliveryReplay {
  const otpCheck = otpStillWanted(repositories.otps, repositories.users);
  return createDeliveryReplay({
    deliveries: repositories.deliveries,
    stillWanted: {
      otp: otpCheck,
      login: otpCheck,
      activation: activationStillWanted(repositories.users),
      // A notice stays true once sent late: only its sending window (the row's notAfter) ends it.
      notice: () => Promise.resolve(undefined),
    },
    enqueue: (deliveryId) => requeueDispatch(ctx.queues.dispatch, deliveryId),
    activity: repositories.activity,
    logger: ctx.logger.child({ component: 'delivery-replay' }),
  });
}

/** Providers' delivery receipts; a failed OTP message fails over to the next channel. */
function composeDeliveryReceipts(ctx: ServiceContext, repositories: ApiRepositories): RecordDeliveryReceipt {
  const { deliveries, otps } = repositories;
  const failover = deliveryFailoverOn(
    { deliveries, otps },
    ctx.config,
    otpKeysFromConfig(ctx.config).encryptionKey,
    (deliveryId) => enqueueDispatch(ctx.queues.dispatch, deliveryId),
    ctx.logger,
  );
  return createDeliveryReceipts({
    deliveries,
    journal: createSentJournal(ctx.redis, ctx.config.queuePrefix),
    early: createEarlyReceiptStore(ctx.redis, ctx.config.queuePrefix),
    logger: ctx.logger,
    failover,
  }).record;
}
