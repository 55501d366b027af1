export { ResultCode, type ResultCodeValue } from './result-codes.js';
export { ClientLibraryError, SvcIdentityError, type ErrorKind, type OperationName, type SvcIdentityErrorFields } from './errors.js';
export {
  NotificationClient,
  type NotificationChange,
  type NotificationClientOptions,
  type NotificationEvents,
  type NotificationWatch,
  type PushSubscriptionJson,
  type RegisteredPushSubscription,
} from './notification-client.js';
export { actionNeedsNumber } from './notification-types.js';
export type {
  EventPayload,
  HistoryRecord,
  Notification,
  NotificationAction,
  NotificationText,
  UpdateAcknowledgement,
} from './notification-types.js';
export {
  createDeviceKey,
  deviceRegistration,
  ensureDeviceKey,
  exportPublicJwk,
  signAnswer,
  type DeviceRegistration,
  type PublicDeviceJwk,
} from './device-key.js';
export { IndexedDbDeviceKeyStore, MemoryDeviceKeyStore, type DeviceKeyStore } from './device-key-store.js';
export { SignIn, type PendingSignIn, type SignInOptions, type SignOutResult, type TokenSet } from './sign-in.js';
export { HISTORY_STATUSES, type DateArgument } from './argument-checks.js';
export { Passkeys, type PasskeyInfo, type PasskeysOptions } from './passkeys.js';
