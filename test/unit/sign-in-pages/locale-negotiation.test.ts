import {
  chooseLocale,
  localeOfAcceptLanguage,
  localeOfUiLocales,
  MAX_LANGUAGE_LIST_LENGTH,
} from '../../../core/platform/locales/locale-negotiation.js';

describe('the language of the sign-in pages', () => {
  test('when ui_locales names shipped languages, then the first one wins, with or without region', () => {
    expect(localeOfUiLocales('fr')).toBe('fr');
    expect(localeOfUiLocales('fr-CA en')).toBe('fr');
    expect(localeOfUiLocales('nl-NL fr-BE en')).toBe('fr');
    expect(localeOfUiLocales('EN-gb fr')).toBe('en');
    expect(localeOfUiLocales('es-MX en')).toBe('es');
    expect(localeOfUiLocales('de-CH fr')).toBe('de');
    expect(localeOfUiLocales('pt-BR en')).toBe('pt');
    expect(localeOfUiLocales('nl ja')).toBeUndefined();
  });

  test('when Accept-Language has q-values, then the most wanted shipped language wins; equal ones keep their order; q=0 is refused', () => {
    expect(localeOfAcceptLanguage('fr-FR,fr;q=0.9')).toBe('fr');
    expect(localeOfAcceptLanguage('nl-NL,en;q=0.5,fr;q=0.8')).toBe('fr');
    expect(localeOfAcceptLanguage('de-AT,de;q=0.9,en;q=0.8')).toBe('de');
    expect(localeOfAcceptLanguage('es-419,es;q=0.9')).toBe('es');
    expect(localeOfAcceptLanguage('pt-PT,pt;q=0.9,en;q=0.8')).toBe('pt');
    expect(localeOfAcceptLanguage('en;q=0.7, fr;q=0.7')).toBe('en');
    expect(localeOfAcceptLanguage('fr;q=0, en;q=0.1')).toBe('en');
    expect(localeOfAcceptLanguage('fr;q=0')).toBeUndefined();
    expect(localeOfAcceptLanguage('*')).toBeUndefined();
  });

  test('when the input is not a language list, then nothing is chosen and no error is raised', () => {
    for (const garbage of [
      '',
      ' , ; ',
      '../../etc/passwd',
      'fr;q=2',
      'fr;q=abc',
      'fr\r\nSet-Cookie: a=b',
      '<script>',
      'f'.repeat(9),
      undefined,
      42,
      ['fr'],
    ]) {
      expect(localeOfAcceptLanguage(garbage)).toBeUndefined();
      expect(localeOfUiLocales(garbage)).toBeUndefined();
    }
  });

  test('when a list is longer than the cap, then only its whole entries before the cap are read', () => {
    const filler = 'nl;q=0.9,'.repeat(Math.ceil(MAX_LANGUAGE_LIST_LENGTH / 9));
    expect(localeOfAcceptLanguage(`${filler}fr`)).toBeUndefined();
    expect(localeOfAcceptLanguage(`fr;q=0.5,${'x'.repeat(100_000)}`)).toBe('fr');
    // An entry the cap cuts in half is dropped, never read as a shorter tag.
    const prefix = `nl;q=0.1${' '.repeat(MAX_LANGUAGE_LIST_LENGTH - 11)},`;
    expect(prefix.length).toBe(MAX_LANGUAGE_LIST_LENGTH - 2);
    // The cap leaves "fr" of "fry" (Western Frisian): that must not be read as French.
    expect(localeOfAcceptLanguage(`${prefix}fry`)).toBeUndefined();
    expect(localeOfAcceptLanguage(`${prefix}fr,en`)).toBe('fr');
    // At most 32 entries are read, however short.
    expect(localeOfAcceptLanguage(`${'nl,'.repeat(32)}fr`)).toBeUndefined();
    expect(localeOfUiLocales(`${'nl '.repeat(1000)}fr`)).toBeUndefined();
  });

  test('when the app and the browser disagree, then ui_locales wins; when neither names a shipped language, then the default', () => {
    expect(chooseLocale({ uiLocales: 'fr', acceptLanguage: 'en', fallback: 'en' })).toBe('fr');
    expect(chooseLocale({ uiLocales: 'ja', acceptLanguage: 'fr-FR,fr;q=0.9', fallback: 'en' })).toBe('fr');
    expect(chooseLocale({ uiLocales: undefined, acceptLanguage: 'ja', fallback: 'fr' })).toBe('fr');
  });
});
