import { simulatedOutcome } from '../../../workers/dispatch/test-mode-send.js';

describe('test mode: the simulated outcome of a message', () => {
  test("when a magic number is written with or without the leading '+', then it fails alike (one phone)", () => {
    for (const to of ['+15005550001', '15005550001'])
      expect(simulatedOutcome(to)).toEqual({ state: 'FAILED', error: 'failed (test mode)' });
    for (const to of ['+15005550002', '15005550002'])
      expect(simulatedOutcome(to)).toEqual({ state: 'FAILED', error: 'undelivered (test mode)' });
  });

  test('when any other number or address is given, then the message is DELIVERED', () => {
    for (const to of ['+15550001234', '15550001234', 'someone@example.com']) expect(simulatedOutcome(to)).toEqual({ state: 'DELIVERED' });
    expect(simulatedOutcome('Failed@example.com')).toEqual({ state: 'FAILED', error: 'failed (test mode)' });
  });
});
