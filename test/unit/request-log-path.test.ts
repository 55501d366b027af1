import { loggablePath } from '../../api/middleware/request-logging.js';

describe('request log paths', () => {
  test('when a user id is an e-mail address or a phone number, then only a hint of it is logged', () => {
    expect(loggablePath('/v1/users/jane.doe%40example.com')).toBe('/v1/users/j***@example.com');
    expect(loggablePath('/admin/users/jane.doe@example.com/activation')).toBe('/admin/users/j***@example.com/activation');
    expect(loggablePath('/v1/users/15551234567')).not.toContain('5551234');
  });

  test('when the path holds no address, then it is logged as it is, without its query', () => {
    expect(loggablePath('/v1/users/bob-42')).toBe('/v1/users/bob-42');
    expect(loggablePath('/v1/svc-otp/12345678-1234-4234-8234-123456789012/validate?x=jane@example.com')).toBe(
      '/v1/svc-otp/12345678-1234-4234-8234-123456789012/validate',
    );
  });

  test('when an address appears elsewhere in the path, then it is masked too', () => {
    expect(loggablePath('/admin/outbox/jane.doe%40example.com')).toBe('/admin/outbox/j***@example.com');
  });
});
