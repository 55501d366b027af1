import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * What the service does, counted where it happens (API and workers alike). One registry per
 * process: the code that counts imports these directly, and each process exports them with its
 * own metrics (the API's /metrics, a worker's METRICS_PORT). Names follow Prometheus conventions:
 * `svc_` prefix, `_total` for counters, base units (seconds).
 */
export const businessRegistry = new Registry();

export const otpRequests = new Counter({
  name: 'svc_otp_requests_total',
  help: 'OTP generation requests by outcome: accepted (new OTP), replayed (same Idempotency-Key and body)',
  labelNames: ['outcome'] as const,
  registers: [businessRegistry],
});

export const otpValidations = new Counter({
  name: 'svc_otp_validations_total',
  help: 'OTP validations by outcome: SUCCESS, FAILED (wrong code), LOCKED, EXPIRED, USED, CANCELLED',
  labelNames: ['outcome'] as const,
  registers: [businessRegistry],
});

/**
 * The provider label of a message that ended FAILED before any provider had it (refused by
 * SMS_ALLOWED_COUNTRIES, cancelled, expired, a template that did not render): counting it under
 * the channel's provider would blame an account that never saw it (the delivery alerts group by
 * provider). A value rather than a missing label keeps the metric's label set the same.
 */
export const NO_PROVIDER = 'none';

export const deliveryOutcomes = new Counter({
  name: 'svc_deliveries_total',
  help: 'Messages by channel, provider (test: a test client, never sent; none: ended FAILED before any provider had it) and state reached: SENT (provider accepted), FAILED, and from receipts DELIVERED / FAILED',
  labelNames: ['channel', 'provider', 'state'] as const,
  registers: [businessRegistry],
});

export const providerSendDuration = new Histogram({
  name: 'svc_provider_send_duration_seconds',
  help: 'Time of one send call to a provider, by channel, provider and outcome (ok, transient, permanent)',
  labelNames: ['channel', 'provider', 'outcome'] as const,
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [businessRegistry],
});

export const providerBreakerState = new Gauge({
  name: 'svc_provider_breaker_state',
  help: "A provider account's circuit breaker in this process: 0 closed (takes traffic), 0.5 half open (one trial), 1 open (traffic goes to the other account)",
  labelNames: ['channel', 'provider'] as const,
  registers: [businessRegistry],
});

export const smsCountryRefusals = new Counter({
  name: 'svc_sms_country_refusals_total',
  help: 'Mobile numbers refused by SMS_ALLOWED_COUNTRIES, by the country read from the number (unknown: none) and where: given (enrollment or PATCH, API), asked (an OTP by SMS alone to a number stored earlier, API) or send (dispatch worker, a number stored earlier)',
  labelNames: ['country', 'where'] as const,
  registers: [businessRegistry],
});

/**
 * Messages whose template did not render: they end FAILED as `provider="none"`, which the delivery
 * alert leaves out (no account failed them), so a template an admin broke would fail every message
 * of its channel without a page. Counted apart for their own alert (SvcIdentityTemplatesNotRendering).
 */
export const deliveryRenderFailures = new Counter({
  name: 'svc_delivery_render_failures_total',
  help: 'Messages that ended FAILED because their template did not render (a template that does not render, or a macro value it refuses), by channel',
  labelNames: ['channel'] as const,
  registers: [businessRegistry],
});

export const deliveryFailovers = new Counter({
  name: 'svc_delivery_failovers_total',
  help: 'Messages sent again after one ended FAILED, by the failed channel and the way out: account (same channel, the other account) or channel (the fallback channel)',
  labelNames: ['channel', 'via'] as const,
  registers: [businessRegistry],
});

export const signIns = new Counter({
  name: 'svc_sign_ins_total',
  help: 'Login-code checks on the sign-in pages by outcome: signed_in, wrong_code, locked (the code), expired, not_active, refused, sign_in_locked (the user, after LOGIN_MAX_FAILURES wrong codes); passkey answers as passkey_signed_in, passkey_unknown_passkey, passkey_not_verified, passkey_not_active, passkey_refused',
  labelNames: ['outcome'] as const,
  registers: [businessRegistry],
});

export const clientAuthenticationFailures = new Counter({
  name: 'svc_client_auth_failures_total',
  help: 'Failed client authentications at the token, introspection and revocation endpoints, by endpoint (token, introspection, revocation) and outcome: failed (wrong secret, unknown client id, none sent; answered 401) or limited (answered 429: the caller address used up its failures, for that client or for every client)',
  labelNames: ['endpoint', 'outcome'] as const,
  registers: [businessRegistry],
});

export const notificationsEnded = new Counter({
  name: 'svc_notifications_final_total',
  help: 'Notifications that reached a final state, by state (UPDATED, EXPIRED, CANCELLED, DISMISSED, TAMPERED, DISCARD)',
  labelNames: ['status'] as const,
  registers: [businessRegistry],
});

export const notificationExpiryLag = new Histogram({
  name: 'svc_notification_expiry_lag_seconds',
  help: 'How long after its expiresAt the notification worker marked a notification EXPIRED',
  buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300],
  registers: [businessRegistry],
});

export const deliveriesSwept = new Counter({
  name: 'svc_deliveries_swept_total',
  help: "Deliveries handled by the dispatch worker's delivery sweeper, by outcome: requeued (QUEUED past SWEEPER_GRACE_MS with no job: queued again), recovered (a send journaled by a worker that died before writing it to the row), expired (ended unsent: its sending window closed)",
  labelNames: ['outcome'] as const,
  registers: [businessRegistry],
});

export const userEventsSwept = new Counter({
  name: 'svc_notification_user_events_swept_total',
  help: "Owed notification events handled by the notification worker's sweep, by outcome: appended (late, for a change the API wrote but did not append), failed (not appended; tried again after its lease), dropped (nothing owed any more)",
  labelNames: ['outcome'] as const,
  registers: [businessRegistry],
});

export const pushSends = new Counter({
  name: 'svc_push_sends_total',
  help: 'Web Push sends to a subscription by outcome: sent (push service accepted), gone (404/410, subscription deleted), retry (429/5xx or network error, tried again), deferred (its user or enterprise already held its share of the worker push slots, PUSH_CONCURRENCY_PER_USER or PUSH_CONCURRENCY_PER_ENTERPRISE: tried again in a second or two without using up an attempt), failed (retries used up), rejected (other refusal), refused (address not allowed), skipped (notification ended first)',
  labelNames: ['outcome'] as const,
  registers: [businessRegistry],
});

export const callbacksDeferred = new Counter({
  name: 'svc_notification_callbacks_deferred_total',
  help: "Callbacks put back without a request and without using up an attempt, by reason: host_busy (their receiver's host already held its share of the worker's callback slots, NOTIFICATION_CALLBACK_CONCURRENCY_PER_HOST, or their enterprise its share over all its hosts, NOTIFICATION_CALLBACK_CONCURRENCY_PER_ENTERPRISE: slow or silent receivers) or circuit_open (their receiver failed NOTIFICATION_CALLBACK_CIRCUIT_FAILURES times in a row: held back until its cool-down ends and a probe answers)",
  labelNames: ['reason'] as const,
  registers: [businessRegistry],
});

export const callbackCircuitEvents = new Counter({
  name: 'svc_notification_callback_circuits_total',
  help: "Callback receivers' circuit breakers in this process, by outcome: opened (failed NOTIFICATION_CALLBACK_CIRCUIT_FAILURES times in a row), probe (one callback sent after the cool-down), probe_failed (open again for a cool-down), closed (answered again)",
  labelNames: ['outcome'] as const,
  registers: [businessRegistry],
});

export const callbackCircuitsOpen = new Gauge({
  name: 'svc_notification_callback_circuits_open',
  help: 'Callback receiver hosts whose circuit is open in this process (their callbacks held back)',
  registers: [businessRegistry],
});

export const activationsSwept = new Counter({
  name: 'svc_activations_swept_total',
  help: "Activations of lost enrollment jobs handled by the enrollment worker's sweep, by outcome: prepared (messages written and queued), failed (could not be prepared, for example a code that no longer decrypts; tried again after a back-off)",
  labelNames: ['outcome'] as const,
  registers: [businessRegistry],
});

export const activityEntriesSwept = new Counter({
  name: 'svc_activity_entries_swept_total',
  help: "Activity entries of user changes and of admin changes to clients, templates and groups handled by the enrollment worker's sweeps (their process did not write them), by outcome: appended, already (another process wrote it meanwhile), dropped (stored ahead of a passkey or sign-in lock change that was not made), failed (a user, client, template or group whose entries could not be written; tried again after a minute)",
  labelNames: ['outcome'] as const,
  registers: [businessRegistry],
});

/**
 * When the key that signs access tokens in this API process started signing (Unix time): its
 * activeFrom, or its creation for a first key. `time() - svc_signing_key_start_time_seconds` is its
 * age, to alert on against a rotation policy; absent while SIGNING_KEY_JWK signs them.
 */
export const signingKeyStartTime = new Gauge({
  name: 'svc_signing_key_start_time_seconds',
  help: 'When the key signing access tokens in this process started signing (Unix time); absent for SIGNING_KEY_JWK',
  labelNames: ['alg'] as const,
  registers: [businessRegistry],
});
