/** Passkey sign-ins do not wait for the user forever: what the login page's script asks browsers for (its `timeout: 300000`). */
export const SIGN_IN_TIMEOUT_MS = 5 * 60 * 1000;
/** How long the page's challenge answers: the browser's timeout plus a minute for the way back. */
export const SIGN_IN_CHALLENGE_LIFETIME_MS = SIGN_IN_TIMEOUT_MS + 60 * 1000;
