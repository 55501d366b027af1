/**
 * The client library's result codes that each refusal of the user API maps to:
 * 141 the user is blocked, 39 an unknown error (server failures, and credentials the app cannot
 * fix by retrying with other arguments), 4 invalid arguments (everything else the user sent).
 */
export const CLIENT_LIBRARY_CODES = { INVALID_ARGUMENTS: 4, UNKNOWN_ERROR: 39, USER_BLOCKED: 141 } as const;

export function clientLibraryCode(status: number, error: string | undefined): number {
  if (error === 'user_blocked') return CLIENT_LIBRARY_CODES.USER_BLOCKED;
  if (status >= 500 || status === 401 || status === 403) return CLIENT_LIBRARY_CODES.UNKNOWN_ERROR;
  return CLIENT_LIBRARY_CODES.INVALID_ARGUMENTS;
}
