import { loadTemplateFiles } from '../../../core/templates/template-files.loader.js';
import { validateTemplateSyntax } from '../../../core/templates/template-renderer.js';
import { BASE_LOCALE, SHIPPED_LOCALES } from '../../../core/platform/locales/shipped-locales.js';
import { LOGIN_CODE } from '../../../core/sign-in/login.service.js';
import { localizedTemplateName } from '../../../core/templates/template-locale.js';

describe('language variants of the built-in templates', () => {
  const templates = loadTemplateFiles();
  const named = (name: string) => templates.find((t) => t.name === name);

  // The login code goes out in the language of the sign-in's pages: a shipped language without its login templates would send nothing.
  test.each(SHIPPED_LOCALES.filter((l) => l !== BASE_LOCALE))(
    'when %s ships, then the login SMS and e-mail have their own text, subject and HTML',
    (locale) => {
      const sms = named(localizedTemplateName(LOGIN_CODE.templates.SMS, locale));
      const email = named(localizedTemplateName(LOGIN_CODE.templates.EMAIL, locale));
      const english = named(LOGIN_CODE.templates.EMAIL);
      expect(sms).toMatchObject({ channel: 'SMS' });
      expect(sms?.text).toContain('__SVC_OTP__');
      expect(email).toMatchObject({ channel: 'EMAIL' });
      expect(email?.subject).not.toBe(english?.subject);
      expect(email?.html).not.toBe(english?.html);
      expect(email?.html).toContain(`lang="${locale}"`);
      for (const template of [sms, email]) expect(() => validateTemplateSyntax(template as NonNullable<typeof template>)).not.toThrow();
    },
  );

  test('when a template has no variant files, then it has no variant (English is used)', () => {
    expect(named('otp_sms')).toBeDefined();
    expect(templates.filter((t) => t.name.startsWith('otp_sms.'))).toEqual([]);
  });
});
