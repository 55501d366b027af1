/**
 * How long the proof of a successful OTP validation lives: long enough to pass on, not to reuse.
 * It is signed with the token signing keys, so a rotation keeps a replaced key published at least
 * this long (core/auth/signing-key-rotation.ts); the OTP feature signs it (core/otp/otp-jwt.ts).
 */
export const OTP_JWT_TTL_SECONDS = 300;
