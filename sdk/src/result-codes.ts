/** Result codes of the notification operations, the same in every client library of the service. */
export const ResultCode = {
  SUCCESS: 0,
  INVALID_ARGUMENTS: 4,
  UNKNOWN_ERROR: 39,
  USER_BLOCKED: 141,
} as const;

export type ResultCodeValue = (typeof ResultCode)[keyof typeof ResultCode];

export type OperationName = 'GetNotifications' | 'UpdateNotification' | 'GetNotificationHistory';

/** Why an operation failed: `code` says what the app should do (retry, report, stop). */
export class ClientLibraryError extends Error {
  override readonly name = 'ClientLibraryError';
  constructor(
    readonly operation: OperationName,
    readonly code: Exclude<ResultCodeValue, 0>,
    message: string,
    /** HTTP status of the server's refusal; absent when the library refused before any request. */
    readonly status?: number,
    /** Extra fields of the server's refusal, e.g. `triesLeft` after a wrong matching number. */
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }
}
