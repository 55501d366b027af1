import { unknownSettings, unknownSettingWarning } from '../../../core/platform/config/unknown-settings.js';

describe('environment variables that look like settings and are not', () => {
  test('when a setting is mistyped, then it is named with the setting it nearly spells', () => {
    expect(unknownSettings({ RATE_LIMT_OTP_PER_CLIENT: '5', NOTIFICATON_CALLBACK_TIMEOUT_MS: '1' })).toEqual([
      { name: 'NOTIFICATON_CALLBACK_TIMEOUT_MS', nearest: 'NOTIFICATION_CALLBACK_TIMEOUT_MS' },
      { name: 'RATE_LIMT_OTP_PER_CLIENT', nearest: 'RATE_LIMIT_OTP_PER_CLIENT' },
    ]);
    // Two neighbours swapped count as one slip.
    expect(unknownSettings({ MONGODB_UIR: 'x' })).toEqual([{ name: 'MONGODB_UIR', nearest: 'MONGODB_URI' }]);
  });

  test("when a variable is in a family of the service's settings but far from each, then it is named without a guess", () => {
    expect(unknownSettings({ RATE_LIMIT_SMS_PER_PERSON_PER_DAY: '3' })).toEqual([{ name: 'RATE_LIMIT_SMS_PER_PERSON_PER_DAY' }]);
  });

  test("when variables are the machine's, Kubernetes' service links, the providers' SDKs' or declared settings, then none is named", () => {
    expect(
      unknownSettings({
        PATH: '/usr/bin',
        HOME: '/root',
        NODE_OPTIONS: '--max-old-space-size=512',
        NODE_EXTRA_CA_CERTS: '/ca.pem',
        npm_lifecycle_event: 'start',
        REDIS_PORT: 'tcp://10.0.0.1:6379',
        REDIS_SERVICE_HOST: '10.0.0.1',
        MONGODB_PORT_27017_TCP: 'tcp://10.0.0.2:27017',
        TWILIO_EDGE: 'dublin',
        TWILIO_REGION: 'ie1',
        RATE_LIMIT_OTP_PER_CLIENT: '5',
        OTP_HMAC_KEY: 'k',
        PORT: '8080',
      }),
    ).toEqual([]);
  });

  test('when the warning is written, then it names the variable and the setting, never the value', () => {
    const [unknown] = unknownSettings({ RATE_LIMT_OTP_PER_CLIENT: 'do-not-print-me' });
    if (!unknown) throw new Error('expected the mistyped name');
    const warning = unknownSettingWarning(unknown);
    expect(warning).toBe(
      'RATE_LIMT_OTP_PER_CLIENT is not a setting of this service and is ignored: did you mean RATE_LIMIT_OTP_PER_CLIENT?',
    );
    expect(warning).not.toContain('do-not-print-me');
  });
});
