import { crashHandler } from '../../../core/platform/lifecycle/crash-report.js';
import { memoryLogger } from '../../support/memory-logger.js';

describe('an error nothing handled', () => {
  test('when a rejection carrying an e-mail address and a phone number is left unhandled, then one fatal JSON line names it masked and the process exits 1', () => {
    const { logger, lines } = memoryLogger();
    const exits: number[] = [];
    const duplicate = new Error(
      'E11000 duplicate key error dup key: { emailId: "alice.martin@example.com", mobileNumber: "+15550001234" }',
    );
    crashHandler('api', logger, 'unhandledRejection', (code) => exits.push(code))(duplicate);
    expect(exits).toEqual([1]);
    const [line, ...rest] = lines();
    expect(rest).toEqual([]);
    expect(line).toMatchObject({ level: 60, msg: 'api stopped on an error nothing handled (unhandledRejection)' });
    const text = JSON.stringify(line);
    expect(text).toContain('E11000 duplicate key error');
    expect(text).toContain('a***@example.com');
    expect(text).not.toContain('alice.martin@example.com');
    expect(text).not.toContain('15550001234');
  });

  test('when an exception is thrown with no catch, then it is logged fatal with its stack, and a rejection with no Error reason is logged as it is', () => {
    const { logger, lines } = memoryLogger();
    const exits: number[] = [];
    crashHandler('worker-dispatch', logger, 'uncaughtException', (code) => exits.push(code))(new TypeError('x is not a function'));
    crashHandler('worker-dispatch', logger, 'unhandledRejection', (code) => exits.push(code))('a plain string');
    expect(exits).toEqual([1, 1]);
    const [thrown, rejected] = lines();
    expect(thrown).toMatchObject({ level: 60, err: { type: 'TypeError', message: 'x is not a function' } });
    expect(String((thrown?.err as { stack: string }).stack)).toContain('TypeError: x is not a function');
    expect(rejected).toMatchObject({ level: 60, err: 'a plain string' });
  });
});
