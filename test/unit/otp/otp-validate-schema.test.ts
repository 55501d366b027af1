import { describeSchemaError } from '../../../core/platform/schemas/schema-error-message.js';
import { getValidator } from '../../../core/platform/schemas/schema-registry.js';

const SCHEMA_ID = 'otp.validate.json';

function firstError(body: unknown): string | undefined {
  const validate = getValidator(SCHEMA_ID);
  if (validate(body)) return undefined;
  return describeSchemaError(SCHEMA_ID, validate.errors![0]);
}

describe('otp.validate.json', () => {
  test.each(['1', '483920', 'Xk7#p9Q2abcd'])('when otp is %j, then the body is accepted', (otp) => {
    expect(firstError({ otp })).toBeUndefined();
  });

  test.each([
    [{}, 'otp is required'],
    [{ otp: 483920 }, 'otp must be a string'],
    [{ otp: '' }, 'otp must be between 1 and 12 characters long'],
    [{ otp: '1234567890123' }, 'otp must be between 1 and 12 characters long'],
    [{ otp: '1', otpUuid: 'x' }, 'otpUuid is not allowed (allowed: otp)'],
  ])('when the body is %j, then the message is %j', (body, message) => {
    expect(firstError(body)).toBe(message);
  });
});
