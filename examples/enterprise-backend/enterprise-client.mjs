// A small client of svc-identity's enterprise API, for a backend to copy: a cached
// client-credentials token, and the answers every call must expect (429 and 503 with
// Retry-After). Node 18+ (fetch); no dependencies.

/** A token is asked again this long before it expires, so no call goes out with a dying one. */
const TOKEN_MARGIN_SECONDS = 60;
/** A call waits out a Retry-After this long at most; beyond it the error goes to the caller. */
const MAX_RETRY_AFTER_SECONDS = 5;

export class ServiceError extends Error {
  constructor(status, body, retryAfterSeconds) {
    super(`svc-identity answered ${status}: ${body?.message ?? body?.error_description ?? JSON.stringify(body)}`);
    this.status = status;
    this.body = body;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * `baseUrl`: the service (`https://id.example.com`); `clientId`/`clientSecret`: the client the
 * admin API registered, with the scopes the calls need (`otp`, `users`, `notifications`).
 */
export function createEnterpriseClient({
  baseUrl,
  clientId,
  clientSecret,
  fetchImpl = fetch,
  sleep = (ms) => new Promise((r) => setTimeout(r, ms)),
}) {
  let token;
  let tokenExpiresAt = 0;
  let pendingToken;

  async function fetchToken() {
    const res = await fetchImpl(`${baseUrl}/svc/authserver/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    });
    const body = await res.json();
    if (res.status !== 200) throw new ServiceError(res.status, body, Number(res.headers.get('retry-after')) || undefined);
    token = body.access_token;
    tokenExpiresAt = Date.now() + (body.expires_in - TOKEN_MARGIN_SECONDS) * 1000;
    return token;
  }

  /** One token request at a time, shared by the calls that wait for it. */
  async function accessToken() {
    if (token && Date.now() < tokenExpiresAt) return token;
    pendingToken ??= fetchToken().finally(() => (pendingToken = undefined));
    return pendingToken;
  }

  /**
   * A JSON call. `idempotencyKey`: send the same one when you send the same request again after a
   * timeout or a crash; the service then answers what it did the first time instead of doing it
   * twice (OTP generation, notifications, enrollment).
   */
  async function call(method, path, body, { idempotencyKey } = {}) {
    for (let attempt = 0; ; attempt++) {
      const headers = { authorization: `Bearer ${await accessToken()}` };
      if (body !== undefined) headers['content-type'] = 'application/json';
      if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
      const res = await fetchImpl(`${baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      const parsed = text === '' ? undefined : JSON.parse(text);
      if (res.ok) return { status: res.status, body: parsed, location: res.headers.get('location') ?? undefined };
      const retryAfter = Number(res.headers.get('retry-after')) || undefined;
      // A token refused (expired early, or its signing key retired): one new token, one retry.
      if (res.status === 401 && attempt === 0) {
        token = undefined;
        continue;
      }
      // Busy or briefly down: wait as told, once, when the wait is short; a long wait is the caller's to decide.
      if (
        (res.status === 429 || res.status === 503) &&
        attempt === 0 &&
        retryAfter !== undefined &&
        retryAfter <= MAX_RETRY_AFTER_SECONDS
      ) {
        await sleep(retryAfter * 1000);
        continue;
      }
      throw new ServiceError(res.status, parsed, retryAfter);
    }
  }

  return {
    call,
    /** Sends an OTP of `digits` digits by SMS with the template `template`; returns its otpUuid. */
    async sendOtp({ userId, digits = 6, template = 'otp_sms', expiresIn = 300, attempts = 3, idempotencyKey }) {
      const body = {
        userId,
        otpSpecs: [{ length: digits, charSets: 'N' }],
        dispatchOptions: { SMS: template },
        dynamicMacros: {},
        attempts,
        expiresIn,
      };
      return (await call('POST', '/v1/svc-otp', body, { idempotencyKey })).body.otpUuid;
    },
    /**
     * The OTP's verdict as its `status`: `SUCCESS` for the right code; `FAILED` (with
     * `attemptsLeft`), `LOCKED`, `EXPIRED`, `CANCELLED` or `USED` otherwise. Anything else (an
     * unknown otpUuid, a limit, an outage) throws ServiceError.
     */
    async checkOtp(otpUuid, otp) {
      try {
        return (await call('POST', `/v1/svc-otp/${encodeURIComponent(otpUuid)}/validate`, { otp })).body;
      } catch (err) {
        if (err instanceof ServiceError && [409, 410, 422, 423].includes(err.status) && typeof err.body?.status === 'string')
          return err.body;
        throw err;
      }
    },
    /** Asks the user to approve; the answer comes to `callbackUrl` (see callback-receiver.mjs). Returns the notification uuid. */
    async askApproval({ userId, subject, message, callbackUrl, expiresIn = 120, idempotencyKey }) {
      const body = {
        userId,
        body: [{ lng: 'English', subject, message }],
        actions: [
          { label: 'Approve', action: 'accept', authlevel: 1 },
          { label: 'Reject', action: 'reject', authlevel: 1 },
          { label: 'Report fraud', action: 'fraud', authlevel: 1 },
        ],
        expiresIn,
        ...(callbackUrl === undefined ? {} : { callbackUrl }),
      };
      return (await call('POST', '/v1/notifications', body, { idempotencyKey })).body.notification_uuid;
    },
  };
}
