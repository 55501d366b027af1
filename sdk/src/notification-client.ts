// The notification operations with the positional parameters every client library of the service
// uses, delivering results both as events and as promises.
import {
  checkAction,
  checkActionFilter,
  checkDate,
  checkMatchingNumber,
  checkNotificationId,
  checkOptionalString,
  checkRecordCount,
  checkStartIndex,
  checkStatus,
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
import { ClientLibraryError, ResultCode, type OperationName } from './result-codes.js';

export interface NotificationClientOptions {
  /** Base URL of the service, e.g. https://id.example.com */
  serviceUrl: string;
  /** The signed-in user's access token (see `SignIn`); called before every request. */
  getAccessToken: () => string | Promise<string>;
  /** Where the device key lives; needed to answer notifications that require a signature. */
  deviceKeys?: DeviceKeyStore;
  /** Another fetch implementation (defaults to the global one). */
  fetch?: typeof fetch;
}

export interface NotificationEvents {
  [name: string]: unknown;
  onGetNotifications: EventPayload<{ notifications: Notification[] }>;
  onUpdateNotification: EventPayload<UpdateAcknowledgement>;
  onGetNotificationsHistory: EventPayload<{ history: HistoryRecord[] }>;
  error: ClientLibraryError;
}

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

export class NotificationClient extends TypedEmitter<NotificationEvents> {
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;
  /** Pending notifications seen last, so an answer knows whether to sign or ask for the number. */
  private readonly seen = new Map<string, Notification>();

  constructor(private readonly options: NotificationClientOptions) {
    super();
    this.baseUrl = options.serviceUrl.replace(/\/+$/, '');
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** GetNotifications(recordCount, enterpriseID, startIndex, startDate, endDate): pending notifications, newest first. */
  getNotifications(
    recordCount: number,
    enterpriseID: string,
    startIndex: number,
    startDate: string,
    endDate: string,
  ): Promise<EventPayload<{ notifications: Notification[] }>> {
    const operation: OperationName = 'GetNotifications';
    return this.deliver(operation, 'onGetNotifications', async () => {
      const query = {
        recordCount: String(checkRecordCount(operation, recordCount)),
        enterpriseID: checkOptionalString(operation, 'enterpriseID', enterpriseID),
        startIndex: String(checkStartIndex(operation, startIndex)),
        startDate: checkDate(operation, 'startDate', startDate),
        endDate: checkDate(operation, 'endDate', endDate),
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
        throw new ClientLibraryError(
          operation,
          ResultCode.INVALID_ARGUMENTS,
          'this notification asks for the number shown by the app requesting approval',
        );
      }
      const body: Record<string, string> = { response: action };
      if (matchingNumber !== undefined) body.number = matchingNumber;
      if (notification?.ds_required) body.signature = await this.sign(operation, uuid, action);
      const data = await this.request<UpdateAcknowledgement>(operation, 'POST', `/v1/me/notifications/${uuid}/action`, undefined, body);
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
    startDate: string,
    endDate: string,
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
        startDate: checkDate(operation, 'startDate', startDate),
        endDate: checkDate(operation, 'endDate', endDate),
        notificationStatus: checkStatus(operation, notificationStatus),
        actionPerformed: checkActionFilter(operation, actionPerformed),
        keywordSearch: checkOptionalString(operation, 'keywordSearch', keywordSearch),
        deviceID: checkOptionalString(operation, 'deviceID', deviceID),
      };
      return this.request<{ history: HistoryRecord[] }>(operation, 'GET', '/v1/me/notifications/history', query);
    });
  }

  /**
   * Runs one operation and reports it both ways: the event (or `error`) and the returned promise.
   * The promise is marked handled here, so an app that only listens to events never sees an
   * unhandled rejection; an app that awaits it still gets the error.
   */
  private deliver<Name extends 'onGetNotifications' | 'onUpdateNotification' | 'onGetNotificationsHistory'>(
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
        const error =
          err instanceof ClientLibraryError
            ? err
            : new ClientLibraryError(operation, ResultCode.UNKNOWN_ERROR, err instanceof Error ? err.message : String(err));
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
    if (!keys)
      throw new ClientLibraryError(
        operation,
        ResultCode.INVALID_ARGUMENTS,
        'this notification requires a signature, and no device key is stored on this device',
      );
    return signAnswer(keys.privateKey, uuid, action);
  }

  private async request<Data>(
    operation: OperationName,
    method: 'GET' | 'POST',
    path: string,
    query?: Record<string, string>,
    body?: unknown,
  ): Promise<Data> {
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [name, value] of Object.entries(query ?? {})) if (value !== '') url.searchParams.set(name, value);
    const headers: Record<string, string> = { authorization: `Bearer ${await this.options.getAccessToken()}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await this.fetchImpl(url, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    } catch (err) {
      throw new ClientLibraryError(
        operation,
        ResultCode.UNKNOWN_ERROR,
        `the service could not be reached: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? {} : JSON.parse(text);
    } catch {
      throw new ClientLibraryError(
        operation,
        ResultCode.UNKNOWN_ERROR,
        `the service answered ${res.status} with a body that is not JSON`,
        res.status,
      );
    }
    if (!res.ok) {
      const error = parsed as ErrorBody & Record<string, unknown>;
      const message =
        typeof error.message === 'string'
          ? error.message
          : typeof error.error_description === 'string'
            ? error.error_description
            : `the service answered ${res.status}`;
      const { timestamp: _t, status: _s, error: _e, message: _m, path: _p, code: _c, error_description: _d, ...details } = error;
      throw new ClientLibraryError(operation, codeOf(res.status, error), message, res.status, details);
    }
    return parsed as Data;
  }
}
