// The notification operations with the positional parameters every client library of the service
// uses, delivering results both as events and as promises.
import {
  checkAction,
  checkActionFilter,
  checkDateRange,
  checkMatchingNumber,
  checkNotificationId,
  checkOptionalString,
  checkRecordCount,
  checkStartIndex,
  checkStatus,
  type DateArgument,
} from './argument-checks.js';
import { signAnswer } from './device-key.js';
import type { DeviceKeyStore } from './device-key-store.js';
import { TypedEmitter } from './event-emitter.js';
import {
  actionNeedsNumber,
  type EventPayload,
  type HistoryRecord,
  type Notification,
  type UpdateAcknowledgement,
} from './notification-types.js';
import { asSvcIdentityError, invalidArgument, SvcIdentityError, type ErrorKind, type OperationName } from './errors.js';
import { ResultCode } from './result-codes.js';
import { readEventStream } from './event-stream.js';
import { checkTimeout, timeoutSignal } from './timeout.js';

export interface NotificationClientOptions {
  /** Base URL of the service, e.g. https://id.example.com */
  serviceUrl: string;
  /** The signed-in user's access token (see `SignIn`); called before every request. */
  getAccessToken: () => string | Promise<string>;
  /** Where the device key lives; needed to answer notifications that require a signature. */
  deviceKeys?: DeviceKeyStore;
  /** Another fetch implementation (defaults to the global one). */
  fetch?: typeof fetch;
  /** How long a request may wait for an answer before it fails as `network` (default 30000). */
  timeoutMs?: number;
}

export interface NotificationEvents {
  [name: string]: unknown;
  onGetNotifications: EventPayload<{ notifications: Notification[] }>;
  onUpdateNotification: EventPayload<UpdateAcknowledgement>;
  onDismissNotification: EventPayload<UpdateAcknowledgement>;
  onGetNotificationsHistory: EventPayload<{ history: HistoryRecord[] }>;
  /** From `watchNotifications`: a new notification for the user (read it with getNotifications). */
  onNotificationCreated: NotificationChange;
  /** From `watchNotifications`: one of the user's notifications reached a final state. */
  onNotificationEnded: NotificationChange;
  error: SvcIdentityError;
}

/** What the service's notification stream says of one notification. */
export interface NotificationChange {
  type: 'created' | 'ended';
  notification_uuid: string;
  /** ACTIVE for `created`; the final state for `ended`. */
  status: string;
  /** For `created`: when it expires (no event comes for expiry). */
  expires_at?: string;
}

/** What `PushSubscription.toJSON()` gives (a browser's `PushSubscription` is accepted as is). */
export interface PushSubscriptionJson {
  endpoint: string;
  expirationTime?: number | null;
  keys: { p256dh: string; auth: string };
}

/** A push subscription as the service keeps it for the user (its keys are never returned). */
export interface RegisteredPushSubscription {
  subscription_id: string;
  endpoint: string;
  expiration_time?: string;
  created_at: string;
  updated_at: string;
}

/** A browser PushSubscription (its toJSON) or the JSON itself. */
type PushSubscriptionLike = PushSubscriptionJson | { toJSON(): unknown; endpoint: string };

function subscriptionJson(subscription: PushSubscriptionLike): PushSubscriptionJson {
  const json = (
    'toJSON' in subscription && typeof subscription.toJSON === 'function' ? subscription.toJSON() : subscription
  ) as PushSubscriptionJson;
  // Only what the service accepts: browsers may add fields in later versions.
  return {
    endpoint: json.endpoint,
    ...(json.expirationTime !== undefined ? { expirationTime: json.expirationTime } : {}),
    keys: { p256dh: json.keys?.p256dh, auth: json.keys?.auth },
  };
}

/** Stops a `watchNotifications`. */
export interface NotificationWatch {
  stop(): void;
}

/** The longest wait between reconnections after failures in a row. */
const MAX_RECONNECT_MS = 60_000;
/** Changes remembered to recognise a repeat: the service sends each at least once. */
const CHANGES_REMEMBERED = 1000;

interface ErrorBody {
  code?: unknown;
  error?: unknown;
  message?: unknown;
  error_description?: unknown;
}

const KNOWN_CODES = new Set<number>([ResultCode.INVALID_ARGUMENTS, ResultCode.UNKNOWN_ERROR, ResultCode.USER_BLOCKED]);

/** The library code for a refusal: the server's own `code` when it gives one, else by status. */
function codeOf(status: number, body: ErrorBody): 4 | 39 | 141 {
  if (typeof body.code === 'number' && KNOWN_CODES.has(body.code)) return body.code as 4 | 39 | 141;
  if (body.error === 'user_blocked') return ResultCode.USER_BLOCKED;
  if (status === 400 || status === 422) return ResultCode.INVALID_ARGUMENTS;
  return ResultCode.UNKNOWN_ERROR;
}

/**
 * What the app does about a refusal: 401 (token expired, revoked or not a user's) and a token
 * without the scope the operation needs mean a new sign-in; 5xx means the service is unwell, so
 * a later retry; any other 4xx is a refusal of this request.
 */
function kindOf(status: number, body: ErrorBody): ErrorKind {
  if (status === 401 || body.error === 'insufficient_scope' || body.error === 'invalid_token') return 'sign-in-again';
  if (status >= 500) return 'network';
  return 'refused';
}

/**
 * Failures of the stream that reconnecting cannot mend: the tokens need a new sign-in, or the user
 * is blocked (code 141, whose rule is to tell the user and stop).
 */
function endsTheWatch(error: SvcIdentityError): boolean {
  return error.kind === 'sign-in-again' || error.code === ResultCode.USER_BLOCKED;
}

/**
 * The service's 409 for a notification already answered names the stored answer. When it is the
 * answer being sent, the acknowledgement of a first answer, marked `repeated`: the first attempt
 * was stored and its reply lost (or another of the user's devices said the same). Any other
 * failure is thrown again, a 409 for another answer or for an end that is no answer (expired,
 * cancelled, tampered...) included.
 */
function repeatedAnswer(err: unknown, uuid: string, action: string): UpdateAcknowledgement {
  if (err instanceof SvcIdentityError && err.status === 409) {
    const { notificationStatus, action: stored, is_ds_verified: isDsVerified } = err.details;
    if (notificationStatus === 'UPDATED' && stored === action && typeof isDsVerified === 'boolean') {
      return { status_code: 100, message: 'Success', notification_uuid: uuid, is_ds_verified: isDsVerified, repeated: true };
    }
  }
  throw err;
}

/**
 * The service's 409 for a notification the user already dismissed: the acknowledgement of a first
 * dismissal, marked `repeated` (the reply to an earlier attempt was lost, or another of the user's
 * devices dismissed it). A dismissed notification holds no verified answer. Any other failure,
 * a notification answered or ended otherwise included, is thrown again.
 */
function repeatedDismissal(err: unknown, uuid: string): UpdateAcknowledgement {
  if (err instanceof SvcIdentityError && err.status === 409 && err.details.notificationStatus === 'DISMISSED') {
    return { status_code: 100, message: 'Success', notification_uuid: uuid, is_ds_verified: false, repeated: true };
  }
  throw err;
}

export class NotificationClient extends TypedEmitter<NotificationEvents> {
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;
  /** Pending notifications seen last, so an answer knows whether to sign or ask for the number. */
  private readonly seen = new Map<string, Notification>();

  constructor(private readonly options: NotificationClientOptions) {
    super();
    this.baseUrl = options.serviceUrl.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.timeoutMs = checkTimeout(options.timeoutMs);
  }

  /** GetNotifications(recordCount, enterpriseID, startIndex, startDate, endDate): pending notifications, newest first. */
  getNotifications(
    recordCount: number,
    enterpriseID: string,
    startIndex: number,
    startDate: DateArgument,
    endDate: DateArgument,
  ): Promise<EventPayload<{ notifications: Notification[] }>> {
    const operation: OperationName = 'GetNotifications';
    return this.deliver(operation, 'onGetNotifications', async () => {
      const query = {
        recordCount: String(checkRecordCount(operation, recordCount)),
        enterpriseID: checkOptionalString(operation, 'enterpriseID', enterpriseID),
        startIndex: String(checkStartIndex(operation, startIndex)),
        ...checkDateRange(operation, startDate, endDate),
      };
      const data = await this.request<{ notifications: Notification[] }>(operation, 'GET', '/v1/me/notifications', query);
      for (const notification of data.notifications) this.seen.set(notification.notification_uuid, notification);
      return data;
    });
  }

  /**
   * UpdateNotification(notificationID, response): answers a pending notification. The answer is
   * signed with the device key when the notification requires it; `number` is the two-digit
   * number the enterprise showed, needed with number matching to approve (not to reject or
   * report fraud: a person who did not ask has no number). A wrong number is refused with
   * `details.triesLeft`.
   *
   * Sending an answer again is safe: when the notification already holds this same answer (the
   * reply to an earlier attempt was lost), it resolves as a first answer does, with
   * `repeated: true` and the stored answer's `is_ds_verified`. Another answer than the stored one
   * is refused (409, `details.action` names the stored one).
   */
  updateNotification(notificationID: string, response: string, number?: string): Promise<EventPayload<UpdateAcknowledgement>> {
    const operation: OperationName = 'UpdateNotification';
    return this.deliver(operation, 'onUpdateNotification', async () => {
      const uuid = checkNotificationId(operation, notificationID);
      const action = checkAction(operation, 'response', response);
      const matchingNumber = checkMatchingNumber(operation, number);
      const notification = await this.findPending(uuid);
      // Only actions that need the number are refused without it: saying no never needs it.
      if (notification && actionNeedsNumber(notification, action) && matchingNumber === undefined) {
        throw invalidArgument(operation, 'this notification asks for the number shown by the app requesting approval');
      }
      const body: Record<string, string> = { response: action };
      if (matchingNumber !== undefined) body.number = matchingNumber;
      if (notification?.ds_required) body.signature = await this.sign(operation, uuid, action);
      const data = await this.request<UpdateAcknowledgement>(
        operation,
        'POST',
        `/v1/me/notifications/${uuid}/action`,
        undefined,
        body,
      ).catch((err: unknown) => repeatedAnswer(err, uuid, action));
      this.seen.delete(uuid);
      return data;
    });
  }

  /**
   * DismissNotification(notificationID): the user sets a pending notification aside without
   * answering it (it ends DISMISSED; the enterprise's callback says so). Not one of the spec's
   * positional operations: an extension of this library, with the same result shapes as
   * UpdateNotification. Dismissing again resolves with `repeated: true`; a notification that
   * already ended another way is refused (409, `details.notificationStatus` says how).
   */
  dismissNotification(notificationID: string): Promise<EventPayload<UpdateAcknowledgement>> {
    const operation: OperationName = 'DismissNotification';
    return this.deliver(operation, 'onDismissNotification', async () => {
      const uuid = checkNotificationId(operation, notificationID);
      const data = await this.request<UpdateAcknowledgement>(operation, 'POST', `/v1/me/notifications/${uuid}/dismiss`).catch(
        (err: unknown) => repeatedDismissal(err, uuid),
      );
      this.seen.delete(uuid);
      return data;
    });
  }

  /**
   * GetNotificationHistory(recordCount, enterpriseID, startIndex, startDate, endDate,
   * notificationStatus, actionPerformed, keywordSearch, deviceID): notifications in a final state.
   */
  getNotificationHistory(
    recordCount: number,
    enterpriseID: string,
    startIndex: number,
    startDate: DateArgument,
    endDate: DateArgument,
    notificationStatus: string,
    actionPerformed: string,
    keywordSearch: string,
    deviceID: string,
  ): Promise<EventPayload<{ history: HistoryRecord[] }>> {
    const operation: OperationName = 'GetNotificationHistory';
    return this.deliver(operation, 'onGetNotificationsHistory', async () => {
      const query = {
        recordCount: String(checkRecordCount(operation, recordCount)),
        enterpriseID: checkOptionalString(operation, 'enterpriseID', enterpriseID),
        startIndex: String(checkStartIndex(operation, startIndex)),
        ...checkDateRange(operation, startDate, endDate),
        notificationStatus: checkStatus(operation, notificationStatus),
        actionPerformed: checkActionFilter(operation, actionPerformed),
        keywordSearch: checkOptionalString(operation, 'keywordSearch', keywordSearch),
        deviceID: checkOptionalString(operation, 'deviceID', deviceID),
      };
      return this.request<{ history: HistoryRecord[] }>(operation, 'GET', '/v1/me/notifications/history', query);
    });
  }

  /**
   * Listens to the service's stream of the user's notifications and emits `onNotificationCreated`
   * and `onNotificationEnded` as they happen, so an app shows a new approval at once, each change
   * once (a change the service sends again is recognised by its notification and type). Reconnects
   * by itself (resuming after the last event it got, so nothing is missed or repeated), waiting
   * longer after failures in a row; each failure is also emitted as `error`. A failure of kind
   * `sign-in-again` stops it (sign in, then call it again), and so does a blocked user (code 141).
   */
  watchNotifications(): NotificationWatch {
    const operation: OperationName = 'WatchNotifications';
    let stopped = false;
    let lastEventId: string | undefined;
    let retryMs = 3000;
    let connection: AbortController | undefined;
    let pause: (() => void) | undefined;
    // The service may send a change twice (it sends each at least once); the app hears it once.
    const seen = new Set<string>();
    const isRepeat = (change: NotificationChange): boolean => {
      const key = `${change.type}:${change.notification_uuid}`;
      if (seen.has(key)) return true;
      seen.add(key);
      if (seen.size > CHANGES_REMEMBERED) seen.delete(seen.values().next().value as string);
      return false;
    };
    const run = async () => {
      for (let failures = 0; !stopped;) {
        connection = new AbortController();
        try {
          const res = await this.fetchImpl(`${this.baseUrl}/v1/me/notifications/stream`, {
            headers: {
              authorization: `Bearer ${await this.accessToken(operation)}`,
              accept: 'text/event-stream',
              ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
            },
            signal: connection.signal,
          });
          if (!res.ok || !res.body) throw await this.refusal(operation, res);
          failures = 0;
          await readEventStream(
            res.body,
            (event) => {
              if (event.id !== undefined) lastEventId = event.id;
              if (event.event !== 'created' && event.event !== 'ended') return;
              const change = JSON.parse(event.data) as NotificationChange;
              if (isRepeat(change)) return;
              this.emit(event.event === 'created' ? 'onNotificationCreated' : 'onNotificationEnded', change);
            },
            (ms) => (retryMs = ms),
          );
        } catch (err) {
          if (stopped) return;
          const error =
            err instanceof SvcIdentityError
              ? err
              : new SvcIdentityError({
                  operation,
                  kind: 'network',
                  message: `the notification stream broke: ${err instanceof Error ? err.message : String(err)}`,
                  cause: err,
                });
          this.emit('error', error);
          if (endsTheWatch(error)) return;
          failures += 1;
        }
        if (stopped) return;
        const wait = Math.min(retryMs * 2 ** Math.min(failures, 6), MAX_RECONNECT_MS);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          pause = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    };
    void run();
    return {
      stop: () => {
        stopped = true;
        connection?.abort();
        pause?.();
      },
    };
  }

  /**
   * The service's VAPID public key, for `PushManager.subscribe({ userVisibleOnly: true,
   * applicationServerKey })` (browsers accept the base64url text as is).
   */
  async getPushKey(): Promise<string> {
    const operation: OperationName = 'GetPushKey';
    try {
      return (await this.request<{ applicationServerKey: string }>(operation, 'GET', '/v1/me/push-key')).applicationServerKey;
    } catch (err) {
      throw asSvcIdentityError(operation, err);
    }
  }

  /**
   * Registers this browser's push subscription for the signed-in user: each new notification then
   * sends it a push that only says something is waiting (`{"type":"notification"}`); the service
   * worker shows a prompt and the app reads the notification with getNotifications. Registering the
   * same subscription again is harmless (it updates its keys), so apps may do it at every start.
   */
  async registerPushSubscription(subscription: PushSubscriptionLike): Promise<RegisteredPushSubscription> {
    const operation: OperationName = 'RegisterPushSubscription';
    try {
      return await this.request<RegisteredPushSubscription>(
        operation,
        'POST',
        '/v1/me/push-subscriptions',
        undefined,
        subscriptionJson(subscription),
      );
    } catch (err) {
      throw asSvcIdentityError(operation, err);
    }
  }

  /**
   * Stops pushes to this browser for the signed-in user (call it at sign-out, before or after
   * `PushSubscription.unsubscribe()`). Resolves false when the service did not hold it.
   */
  async unregisterPushSubscription(subscription: PushSubscriptionLike | string): Promise<boolean> {
    const operation: OperationName = 'UnregisterPushSubscription';
    const endpoint = typeof subscription === 'string' ? subscription : subscription.endpoint;
    try {
      const { subscriptions } = await this.request<{ subscriptions: RegisteredPushSubscription[] }>(
        operation,
        'GET',
        '/v1/me/push-subscriptions',
      );
      const registered = subscriptions.find((s) => s.endpoint === endpoint);
      if (!registered) return false;
      try {
        await this.request(operation, 'DELETE', `/v1/me/push-subscriptions/${encodeURIComponent(registered.subscription_id)}`);
      } catch (err) {
        // Deleted meanwhile (another tab): the outcome the caller wanted.
        if (err instanceof SvcIdentityError && err.status === 404) return false;
        throw err;
      }
      return true;
    } catch (err) {
      throw asSvcIdentityError(operation, err);
    }
  }

  /** The library's error for a refused stream answer. */
  private async refusal(operation: OperationName, res: Response): Promise<SvcIdentityError> {
    let body: ErrorBody = {};
    try {
      body = JSON.parse(await res.text()) as ErrorBody;
    } catch {
      // Not JSON: the status alone says what happened.
    }
    return new SvcIdentityError({
      operation,
      kind: kindOf(res.status, body),
      code: codeOf(res.status, body),
      message: typeof body.message === 'string' ? body.message : `the service answered ${res.status}`,
      status: res.status,
      cause: body,
    });
  }

  /**
   * Runs one operation and reports it both ways: the event (or `error`) and the returned promise.
   * The promise is marked handled here, so an app that only listens to events never sees an
   * unhandled rejection; an app that awaits it still gets the error.
   */
  private deliver<Name extends 'onGetNotifications' | 'onUpdateNotification' | 'onDismissNotification' | 'onGetNotificationsHistory'>(
    operation: OperationName,
    event: Name,
    run: () => Promise<NotificationEvents[Name] extends EventPayload<infer Data> ? Data : never>,
  ): Promise<NotificationEvents[Name]> {
    const result = (async () => {
      try {
        const payload = { response: { ResponseData: await run() } } as NotificationEvents[Name];
        this.emit(event, payload);
        return payload;
      } catch (err) {
        const error = asSvcIdentityError(operation, err);
        this.emit('error', error);
        throw error;
      }
    })();
    result.catch(() => undefined);
    return result;
  }

  private async findPending(uuid: string): Promise<Notification | undefined> {
    if (!this.seen.has(uuid)) {
      const data = await this.request<{ notifications: Notification[] }>('UpdateNotification', 'GET', '/v1/me/notifications', {
        recordCount: '0',
        startIndex: '1',
      });
      for (const notification of data.notifications) this.seen.set(notification.notification_uuid, notification);
    }
    return this.seen.get(uuid);
  }

  private async sign(operation: OperationName, uuid: string, action: string): Promise<string> {
    const keys = await this.options.deviceKeys?.load();
    if (!keys) throw invalidArgument(operation, 'this notification requires a signature, and no device key is stored on this device');
    return signAnswer(keys.privateKey, uuid, action);
  }

  /** The app's access token; failing to get one (e.g. the refresh was refused) means signing in again. */
  private async accessToken(operation: OperationName): Promise<string> {
    try {
      return await this.options.getAccessToken();
    } catch (err) {
      if (err instanceof SvcIdentityError) throw err;
      throw new SvcIdentityError({
        operation,
        kind: 'sign-in-again',
        message: `no access token: ${err instanceof Error ? err.message : String(err)}`,
        cause: err,
      });
    }
  }

  private async request<Data>(
    operation: OperationName,
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    query?: Record<string, string>,
    body?: unknown,
  ): Promise<Data> {
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [name, value] of Object.entries(query ?? {})) if (value !== '') url.searchParams.set(name, value);
    const headers: Record<string, string> = { authorization: `Bearer ${await this.accessToken(operation)}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const timeout = timeoutSignal(this.timeoutMs);
    let res: Response;
    let text: string;
    try {
      res = await this.fetchImpl(url, {
        method,
        headers,
        signal: timeout.signal,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      text = await res.text();
    } catch (err) {
      const reason = timeout.signal.aborted ? timeout.signal.reason : err;
      throw new SvcIdentityError({
        operation,
        kind: 'network',
        message: `the service could not be reached: ${reason instanceof Error ? reason.message : String(reason)}`,
        cause: reason,
      });
    } finally {
      timeout.done();
    }
    let parsed: unknown;
    try {
      parsed = text === '' ? {} : JSON.parse(text);
    } catch (err) {
      throw new SvcIdentityError({
        operation,
        kind: res.status === 401 ? 'sign-in-again' : res.ok || res.status >= 500 ? 'network' : 'refused',
        code: ResultCode.UNKNOWN_ERROR,
        message: `the service answered ${res.status} with a body that is not JSON`,
        status: res.status,
        cause: err,
      });
    }
    if (!res.ok) {
      const error = parsed as ErrorBody & Record<string, unknown>;
      const message =
        typeof error.message === 'string'
          ? error.message
          : typeof error.error_description === 'string'
            ? error.error_description
            : `the service answered ${res.status}`;
      const { timestamp: _t, status: _s, message: _m, path: _p, code: _c, error_description: _d, ...details } = error;
      throw new SvcIdentityError({
        operation,
        kind: kindOf(res.status, error),
        code: codeOf(res.status, error),
        message,
        status: res.status,
        details,
        cause: parsed,
      });
    }
    return parsed as Data;
  }
}
