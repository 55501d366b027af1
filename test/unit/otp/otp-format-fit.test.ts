import { fitsOtpFormat } from '../../../core/otp/otp-format-fit.js';
import { generateOtp } from '../../../core/otp/otp-generator.js';
import type { NormalizedSegment } from '../../../core/otp/otp.types.js';

const segment = (fields: Partial<NormalizedSegment> & Pick<NormalizedSegment, 'length' | 'charSets'>): NormalizedSegment => ({
  minLowercase: 0,
  minUppercase: 0,
  minNumeric: 0,
  minSpecial: 0,
  exclude: [],
  ...fields,
});

describe('fitsOtpFormat: whether a test client fixed code is one the generator could draw', () => {
  const sixDigits = [segment({ length: 6, charSets: ['N'] })];

  test('when the code has the right length and characters, then it fits', () => {
    expect(fitsOtpFormat('424242', sixDigits)).toBe(true);
  });

  test.each(['42424', '4242420', 'ABCDEF', '42424a', ''])('when the code is %p for six digits, then it does not fit', (code) => {
    expect(fitsOtpFormat(code, sixDigits)).toBe(false);
  });

  test('when segments have minimums and exclusions, then each segment is checked on its own', () => {
    const segments = [segment({ length: 2, charSets: ['U'], exclude: ['O'] }), segment({ length: 4, charSets: ['N', 'L'], minNumeric: 2 })];
    expect(fitsOtpFormat('AB12cd', segments)).toBe(true);
    expect(fitsOtpFormat('AO12cd', segments)).toBe(false);
    expect(fitsOtpFormat('AB1bcd', segments)).toBe(false);
    expect(fitsOtpFormat('12ABcd', segments)).toBe(false);
  });

  test('when the generator draws codes, then every one fits its own format', () => {
    const segments = [segment({ length: 8, charSets: ['N', 'L', 'U', 'S'], minSpecial: 1, minUppercase: 2 })];
    for (let i = 0; i < 200; i += 1) expect(fitsOtpFormat(generateOtp(segments), segments)).toBe(true);
  });
});
