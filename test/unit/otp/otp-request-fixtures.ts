import { AppError } from '../../../core/platform/errors/app-error.js';
import { STATUS_OF_KIND } from '../../../api/errors/http-error-mapping.js';
import { parseGenerateOtpRequest } from '../../../core/otp/otp-request.validator.js';

/** A minimal valid Generate OTP body; tests override one field at a time. */
export function validBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    userId: 'alice',
    dispatchOptions: { SMS: 'otp-sms' },
    dynamicMacros: {},
    attempts: 3,
    expiresIn: 300,
    ...overrides,
  };
}

/** The status and message parseGenerateOtpRequest fails with; fails the test if it succeeds. */
export function rejectionOf(body: unknown): { status: number; message: string } {
  try {
    parseGenerateOtpRequest(body);
  } catch (error) {
    if (error instanceof AppError) return { status: STATUS_OF_KIND[error.kind], message: error.message };
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(body)} to be rejected`);
}
