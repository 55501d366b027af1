import { findTemplateMacros, renderTemplate, validateTemplateSyntax } from '../../core/templates/template-renderer.js';
import { MissingMacroError, TemplateSyntaxError } from '../../core/templates/template-errors.js';
import { loadTemplateFiles } from '../../core/templates/template-files.loader.js';
import type { TemplateContent } from '../../core/templates/template.types.js';

const sms: TemplateContent = { name: 'sms_t', channel: 'SMS', text: 'Hi __FIRST_NAME__, code __SVC_OTP__.' };
const email: TemplateContent = {
  name: 'email_t',
  channel: 'EMAIL',
  subject: 'Code for __FIRST_NAME__',
  text: 'Hello __FIRST_NAME__, your code is __SVC_OTP__.',
  html: '{{#> layouts/email title="T"}}<p>Hello __FIRST_NAME__</p><b>__SVC_OTP__</b>{{/layouts/email}}',
};

describe('renderTemplate', () => {
  test('when every macro has a value, then each is replaced in the SMS text', () => {
    expect(renderTemplate(sms, { __FIRST_NAME__: 'Ada', __SVC_OTP__: '123456' })).toEqual({ text: 'Hi Ada, code 123456.' });
  });

  test('when unused macros are given, then they are ignored', () => {
    expect(renderTemplate(sms, { __FIRST_NAME__: 'Ada', __SVC_OTP__: '1', __UNUSED__: 'x' })).toEqual({ text: 'Hi Ada, code 1.' });
  });

  test('when a macro has no value, then MissingMacroError names every missing macro', () => {
    expect(() => renderTemplate(email, {})).toThrow(MissingMacroError);
    expect(() => renderTemplate(email, {})).toThrow('Missing values for macros __FIRST_NAME__, __SVC_OTP__');
    let caught: unknown;
    try {
      renderTemplate(email, { __SVC_OTP__: '1' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ kind: 'invalid', missing: ['__FIRST_NAME__'], message: 'Missing values for macros __FIRST_NAME__' });
  });

  test('when an e-mail is rendered, then the layout wraps the body and values are escaped only in HTML', () => {
    const out = renderTemplate(email, { __FIRST_NAME__: 'Tom & <Jerry>', __SVC_OTP__: '42' });
    expect(out.subject).toBe('Code for Tom & <Jerry>');
    expect(out.text).toBe('Hello Tom & <Jerry>, your code is 42.');
    expect(out.html).toContain('<title>T</title>');
    expect(out.html).toContain('<p>Hello Tom &amp; &lt;Jerry&gt;</p><b>42</b>');
    expect(out.html).toContain('If that was not you, ignore it.');
  });

  test('when a value contains <script>, then the HTML carries it escaped and never as a tag', () => {
    const out = renderTemplate(email, { __FIRST_NAME__: '<script>alert("x")</script>', __SVC_OTP__: '1' });
    expect(out.html).not.toContain('<script>');
    expect(out.html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
  });

  test('when a value contains Handlebars syntax, then it appears literally and is never evaluated', () => {
    const value = '{{> footer}} {{#each this}}x{{/each}} {{{title}}}';
    const out = renderTemplate(email, { __FIRST_NAME__: value, __SVC_OTP__: '1' });
    expect(out.text).toBe(`Hello ${value}, your code is 1.`);
    expect(out.html).toContain('<p>Hello {{&gt; footer}} {{#each this}}x{{/each}} {{{title}}}</p>');
    expect(out.html?.match(/If that was not you/g)).toHaveLength(1);
  });

  test('when a value contains another macro or $& patterns, then it is inserted verbatim (one pass)', () => {
    const out = renderTemplate(sms, { __FIRST_NAME__: '__SVC_OTP__ $& $1', __SVC_OTP__: '999' });
    expect(out).toEqual({ text: 'Hi __SVC_OTP__ $& $1, code 999.' });
  });

  test('when a subject value contains line breaks, then they become spaces', () => {
    const out = renderTemplate(email, { __FIRST_NAME__: 'a\r\nBcc: evil@example.com', __SVC_OTP__: '1' });
    expect(out.subject).toBe('Code for a Bcc: evil@example.com');
  });

  test('when the same template is edited, then the new HTML is rendered (cache follows the source)', () => {
    const edited = { ...email, html: '<i>__SVC_OTP__</i>' };
    renderTemplate(email, { __FIRST_NAME__: 'a', __SVC_OTP__: '1' });
    expect(renderTemplate(edited, { __FIRST_NAME__: 'a', __SVC_OTP__: '2' }).html).toBe('<i>2</i>');
  });
});

describe('findTemplateMacros and validateTemplateSyntax', () => {
  test('when a template uses macros in subject, text and HTML, then all are listed once, sorted', () => {
    expect(findTemplateMacros({ ...email, html: '<p>__SVC_OTP__ __EXTRA_1__</p>' })).toEqual([
      '__EXTRA_1__',
      '__FIRST_NAME__',
      '__SVC_OTP__',
    ]);
  });

  test('when the default templates are loaded, then OTP ones use __SVC_OTP__, login ones also the app name and the code lifetime, activation ones the activation macros, and the passkey notice its name and time', () => {
    const byName = Object.fromEntries(loadTemplateFiles().map((t) => [t.name, findTemplateMacros(t)]));
    expect(byName).toEqual({
      activation_email: [
        '__ACTIVATION_CODE__',
        '__ACTIVATION_LINK__',
        '__ENTERPRISE_ID__',
        '__FIRST_NAME__',
        '__USER_ID__',
        '__VERIFICATION_KEY__',
      ],
      activation_sms: [
        '__ACTIVATION_CODE__',
        '__ACTIVATION_LINK__',
        '__ENTERPRISE_ID__',
        '__FIRST_NAME__',
        '__USER_ID__',
        '__VERIFICATION_KEY__',
      ],
      login_email: ['__SVC_APP__', '__SVC_EXPIRES_IN__', '__SVC_OTP__'],
      login_sms: ['__SVC_APP__', '__SVC_EXPIRES_IN__', '__SVC_OTP__'],
      'login_email.de': ['__SVC_APP__', '__SVC_EXPIRES_IN__', '__SVC_OTP__'],
      'login_sms.de': ['__SVC_APP__', '__SVC_EXPIRES_IN__', '__SVC_OTP__'],
      'login_email.es': ['__SVC_APP__', '__SVC_EXPIRES_IN__', '__SVC_OTP__'],
      'login_sms.es': ['__SVC_APP__', '__SVC_EXPIRES_IN__', '__SVC_OTP__'],
      'login_email.fr': ['__SVC_APP__', '__SVC_EXPIRES_IN__', '__SVC_OTP__'],
      'login_sms.fr': ['__SVC_APP__', '__SVC_EXPIRES_IN__', '__SVC_OTP__'],
      'login_email.pt': ['__SVC_APP__', '__SVC_EXPIRES_IN__', '__SVC_OTP__'],
      'login_sms.pt': ['__SVC_APP__', '__SVC_EXPIRES_IN__', '__SVC_OTP__'],
      otp_email: ['__SVC_OTP__'],
      otp_sms: ['__SVC_OTP__'],
      passkey_added_email: ['__ADDED_AT__', '__FIRST_NAME__', '__PASSKEY_NAME__'],
      passkey_added_sms: ['__ADDED_AT__', '__FIRST_NAME__', '__PASSKEY_NAME__'],
      passkey_removed_email: ['__FIRST_NAME__', '__PASSKEY_NAME__', '__REMOVED_AT__'],
      passkey_removed_sms: ['__FIRST_NAME__', '__PASSKEY_NAME__', '__REMOVED_AT__'],
    });
  });

  test('when HTML does not parse, references unknown data or an unknown partial, then TemplateSyntaxError (422)', () => {
    for (const html of ['{{#if}}', '<p>{{name}}</p>', '{{> nope}}', '{{#each x}}']) {
      expect(() => validateTemplateSyntax({ ...email, html })).toThrow(TemplateSyntaxError);
    }
    expect(() => validateTemplateSyntax(email)).not.toThrow();
  });

  test('when HTML does not parse, then the message says on which line and what the parser expected and got, in one line', () => {
    // Handlebars' own message takes four lines (the place, a quote of the source, a caret, what
    // was expected); its first line alone, "Parse error on line 2:", told the admin nothing.
    expect(() => validateTemplateSyntax({ ...email, html: '<p>Hello</p>\n<p>{{#if x}}unclosed</p>' })).toThrow(
      /^Invalid template html: Parse error on line 2: Expecting .*'OPEN_ENDBLOCK'.*, got 'EOF'$/,
    );
  });

  test('when a few partial calls would render more than 1,000,000 characters, then TemplateSyntaxError naming the limit', () => {
    const html = `{{#*inline "big"}}${'x'.repeat(100_000)}{{/inline}}${'{{>big}}'.repeat(11)}`;
    expect(() => validateTemplateSyntax({ ...email, html })).toThrow(
      'Invalid template html: it renders to more than 1000000 characters with its partials',
    );
  });

  test('when a template calls partials many times within the limits, then it is valid and renders in full', () => {
    const html = `{{#> layouts/email title="T"}}{{#*inline "row"}}<p>__SVC_OTP__</p>{{/inline}}${'{{>row}}'.repeat(900)}{{/layouts/email}}`;
    expect(() => validateTemplateSyntax({ ...email, html })).not.toThrow();
    expect(renderTemplate({ ...email, html }, { __FIRST_NAME__: 'a', __SVC_OTP__: '7' }).html?.match(/<p>7<\/p>/g)).toHaveLength(900);
  });
});
