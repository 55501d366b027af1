/** Result codes of the notification operations, the same in every client library of the service. */
export const ResultCode = {
  SUCCESS: 0,
  INVALID_ARGUMENTS: 4,
  UNKNOWN_ERROR: 39,
  USER_BLOCKED: 141,
} as const;

export type ResultCodeValue = (typeof ResultCode)[keyof typeof ResultCode];
