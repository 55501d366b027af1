// How the creating routes that take an Idempotency-Key document it (notifications, admin creations and rotations).

/** 1 to 255 visible ASCII characters, bare or as a structured-field string (`"abc"`, the key `abc`; `\"` and `\\` escaped). */
export const IDEMPOTENCY_KEY_SCHEMA = {
  type: 'string',
  pattern: '^(?:[\\x21\\x23-\\x7e][\\x21-\\x7e]{0,254}|"(?:[\\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\["\\\\]){1,255}")$',
};

/** The optional request header; `secret` for answers holding a secret shown once. */
export function idempotencyKeyHeader(options: { secret?: boolean } = {}) {
  return {
    name: 'Idempotency-Key',
    description: `Makes a retry safe (draft-ietf-httpapi-idempotency-key-header; the draft's quoted form \`"abc"\` is the key \`abc\`): the same key with the same request, from the same caller on this route, answers the first answer again (\`Idempotent-Replayed: true\`) and does nothing more, for IDEMPOTENCY_KEY_RETENTION_SECONDS (24 hours by default); the same key with another request is 422; while the first request with the key is running, 409${
      options.secret
        ? '. The answer holds a secret shown once: it is given again only for IDEMPOTENCY_SECRET_REPLAY_SECONDS (300 s by default), after which a retry is 409 and creates nothing'
        : ''
    }`,
    schema: IDEMPOTENCY_KEY_SCHEMA,
  };
}

/** The success answer's header saying it is the first answer given again. */
export const idempotentReplayedHeader = {
  'Idempotent-Replayed': {
    description: '`true` when this is the answer to an earlier request with the same Idempotency-Key, given again',
    schema: { type: 'string', enum: ['true'] },
  },
};

/** The 409 of a key whose first request has not answered: when to retry. */
export const idempotencyKeyInUseHeaders = {
  'Retry-After': {
    description:
      'On the 409 of a key whose first request is still being processed: seconds until that request has answered or its claim may be taken over by a retry (at least 1)',
    schema: { type: 'integer', minimum: 1 },
  },
};

export const IDEMPOTENCY_KEY_409 = 'A request with the same Idempotency-Key is still being processed (retry after Retry-After seconds)';
export const IDEMPOTENCY_KEY_SECRET_409 = `${IDEMPOTENCY_KEY_409}, or the answer held a secret that is no longer kept (the body's \`location\` names what was created, when it was created)`;
export const IDEMPOTENCY_KEY_422 =
  '`Idempotency-Key must be 1 to 255 visible ASCII characters`, or `Idempotency-Key was already used with a different request`';
