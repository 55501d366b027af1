import { businessRegistry } from '../../../core/platform/metrics/business-metrics.js';
import {
  checkMobileNumberCountry,
  reportingSmsCountryRefusals,
  SmsCountryRefusedError,
} from '../../../core/users/mobile-number-country.js';
import { memoryLogger } from '../../support/memory-logger.js';

// +44 20 7946 0958 is a London number (Ofcom's drama range); +1 212 is New York.
const UK_NUMBER = '+442079460958';
const ALLOWED = new Set(['US']);

const givenRefusals = async (country: string): Promise<number> => {
  const metric = await businessRegistry.getSingleMetric('svc_sms_country_refusals_total')?.get();
  return metric?.values.find((v) => v.labels.country === country && v.labels.where === 'given')?.value ?? 0;
};

describe('mobile number country refusal', () => {
  test('when a number of a refused country is checked, then it is refused without being counted (the check is pure)', async () => {
    const before = await givenRefusals('GB');
    expect(() => checkMobileNumberCountry(UK_NUMBER, ALLOWED)).toThrow(SmsCountryRefusedError);
    expect(await givenRefusals('GB')).toBe(before);
  });

  test('when parsing refuses a number for its country, then it is counted once and logged with client, enterprise and country, never the number', async () => {
    const { logger, lines } = memoryLogger('warn');
    const before = await givenRefusals('GB');
    const caller = { clientId: 'client-1', enterpriseId: 'ent-1' };
    expect(() => reportingSmsCountryRefusals(() => checkMobileNumberCountry(UK_NUMBER, ALLOWED), caller, logger)).toThrow(
      SmsCountryRefusedError,
    );
    expect(await givenRefusals('GB')).toBe(before + 1);
    expect(lines()).toEqual([expect.objectContaining({ ...caller, country: 'GB' })]);
    expect(JSON.stringify(lines())).not.toContain('2079460958');
  });

  test('when parsing fails for another reason or succeeds, then nothing is counted or logged', async () => {
    const { logger, lines } = memoryLogger('warn');
    const before = await givenRefusals('GB');
    const caller = { clientId: 'client-1', enterpriseId: 'ent-1' };
    expect(reportingSmsCountryRefusals(() => 7, caller, logger)).toBe(7);
    expect(() =>
      reportingSmsCountryRefusals(
        () => {
          throw new Error('other');
        },
        caller,
        logger,
      ),
    ).toThrow('other');
    expect(await givenRefusals('GB')).toBe(before);
    expect(lines()).toEqual([]);
  });
});
