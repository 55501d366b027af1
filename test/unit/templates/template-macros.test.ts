import { findMissingMacros, macrosIn } from '../../../core/templates/template-macros.js';

const SMS = 'Your __BANK__ code is __SVC_OTP__. It expires in __MINUTES__ minutes.';
const EMAIL = '<p>Hello __FIRST_NAME__,</p><p>__BANK__ code: <b>__SVC_OTP__</b></p>';

describe('findMissingMacros', () => {
  test('when some macros used by the templates have no value, then they are returned sorted, without __SVC_OTP__', () => {
    expect(findMissingMacros([...macrosIn(SMS), ...macrosIn(EMAIL)], { __BANK__: 'Acme' })).toEqual(['__FIRST_NAME__', '__MINUTES__']);
  });

  test('when every macro has a value and extra ones are sent, then nothing is missing', () => {
    expect(
      findMissingMacros([...macrosIn(SMS), ...macrosIn(EMAIL)], {
        __BANK__: 'Acme',
        __MINUTES__: '5',
        __FIRST_NAME__: 'Ann',
        __UNUSED__: 'x',
      }),
    ).toEqual([]);
  });

  test('when a template only uses __SVC_OTP__, then {} is enough', () => {
    expect(findMissingMacros(macrosIn('Code: __SVC_OTP__'), {})).toEqual([]);
  });

  test('when text looks almost like a macro, then it is not one', () => {
    expect(macrosIn('__lower__ _SINGLE_ __ __X__y __A B__ 2__Z9__')).toEqual(['__X__', '__Z9__']);
  });

  test('when underscores run on, then a run alone is no macro and extra leading or trailing ones stay text', () => {
    expect(macrosIn('__________ ___ORDER__ __TOTAL___ __A__B__ _____')).toEqual(['__ORDER__', '__TOTAL__', '__A__B__']);
  });

  test('when an empty value is given, then the macro counts as supplied', () => {
    expect(findMissingMacros(macrosIn(SMS), { __BANK__: '', __MINUTES__: '' })).toEqual([]);
  });
});
