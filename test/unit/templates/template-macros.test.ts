import { findMacros, findMissingMacros } from '../../../core/templates/template-macros.js';

const SMS = 'Your __BANK__ code is __SVC_OTP__. It expires in __MINUTES__ minutes.';
const EMAIL = '<p>Hello __FIRST_NAME__,</p><p>__BANK__ code: <b>__SVC_OTP__</b></p>';

describe('findMissingMacros', () => {
  test('when some macros used by the templates have no value, then they are returned sorted, without __SVC_OTP__', () => {
    expect(findMissingMacros([SMS, EMAIL], { __BANK__: 'Acme' })).toEqual(['__FIRST_NAME__', '__MINUTES__']);
  });

  test('when every macro has a value and extra ones are sent, then nothing is missing', () => {
    expect(findMissingMacros([SMS, EMAIL], { __BANK__: 'Acme', __MINUTES__: '5', __FIRST_NAME__: 'Ann', __UNUSED__: 'x' })).toEqual([]);
  });

  test('when a template only uses __SVC_OTP__, then {} is enough', () => {
    expect(findMissingMacros(['Code: __SVC_OTP__'], {})).toEqual([]);
  });

  test('when text looks almost like a macro, then it is not one', () => {
    expect(findMacros(['__lower__ _SINGLE_ __ __X__y __A B__ 2__Z9__'])).toEqual(['__X__', '__Z9__']);
  });

  test('when an empty value is given, then the macro counts as supplied', () => {
    expect(findMissingMacros([SMS], { __BANK__: '', __MINUTES__: '' })).toEqual([]);
  });
});
