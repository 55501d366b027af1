import { jest } from '@jest/globals';

// Every process reads the configuration; only those that check SMS countries or read a number
// should parse libphonenumber-js's metadata. Both ways the library could be reached are watched:
// an ES import (a static one in any module the configuration pulls in) and a require.
const loads: string[] = [];
jest.unstable_mockModule('libphonenumber-js/min', () => {
  loads.push('import');
  return { isSupportedCountry: () => true, parsePhoneNumberFromString: () => undefined };
});
jest.doMock('libphonenumber-js/min', () => {
  loads.push('require');
  return jest.requireActual('libphonenumber-js/min');
});

const base = { MONGODB_URI: 'mongodb://127.0.0.1:27017/x', REDIS_URL: 'redis://127.0.0.1:6379' };

describe('libphonenumber-js on first use', () => {
  test('when the configuration module is imported and read without SMS countries, then libphonenumber-js is not loaded', async () => {
    const { loadConfig } = await import('../../../core/platform/config/config.js');
    expect(loadConfig(base).smsAllowedCountries).toBeUndefined();
    expect(loads).toEqual([]);
  });

  test('when SMS_ALLOWED_COUNTRIES is read, then the library is loaded once, a bad code is refused and good ones are kept', async () => {
    const { loadConfig } = await import('../../../core/platform/config/config.js');
    expect(() => loadConfig({ ...base, SMS_ALLOWED_COUNTRIES: 'US,XX' })).toThrow(/SMS_ALLOWED_COUNTRIES.*not valid: XX/);
    expect([...(loadConfig({ ...base, SMS_ALLOWED_COUNTRIES: 'US,JM' }).smsAllowedCountries ?? [])]).toEqual(['US', 'JM']);
    expect(loads).toEqual(['require']);
  });
});
