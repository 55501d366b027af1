import { renderTemplate } from '../../../core/templates/template-renderer.js';
import { UnsafeMacroUrlError } from '../../../core/templates/template-errors.js';
import type { TemplateContent } from '../../../core/templates/template.types.js';

const withHtml = (html: string): TemplateContent => ({
  name: `url_${html.length}_${Math.random()}`,
  channel: 'EMAIL',
  subject: 'S',
  text: 'T __LINK__',
  html,
});
const render = (html: string, link: string) => renderTemplate(withHtml(html), { __LINK__: link });
const refusal = (html: string, link: string): unknown => {
  try {
    render(html, link);
  } catch (err) {
    return err;
  }
  return undefined;
};

describe('macros inside URL attributes of e-mail HTML', () => {
  test.each([
    ['https://example.com/activate?code=1&x=2'],
    ['http://example.com'],
    ['HTTPS://EXAMPLE.COM'],
    ['mailto:help@example.com'],
    ['tel:+15551234567'],
  ])('when a link macro gives %s, then the e-mail renders with the value escaped', (link) => {
    const out = render('<p><a href="__LINK__">go</a></p>', link);
    expect(out.html).toContain(`href="${link.replace(/&/g, '&amp;').replace(/=/g, '&#x3D;')}"`);
  });

  test.each([
    ['javascript:alert(1)'],
    ['JavaScript:alert(1)'],
    [' javascript:alert(1)'],
    ['java\tscript:alert(1)'],
    ['\u0001javascript:alert(1)'],
    ['javascript&colon;alert(1)'],
    ['data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=='],
    ['vbscript:msgbox(1)'],
    ['file:///etc/passwd'],
    ['//evil.example/x'],
    ['www.example.com'],
    [''],
  ])('when a link macro gives %j, then rendering is refused naming the macro and the attribute', (link) => {
    const err = refusal('<a class="b" href="__LINK__">go</a>', link);
    expect(err).toBeInstanceOf(UnsafeMacroUrlError);
    expect(err).toMatchObject({ kind: 'invalid', message: 'Macro __LINK__ in a href attribute must give an http, https, mailto, tel URL' });
  });

  test('when the template fixes the scheme and a macro fills the rest, then any value is accepted (escaped)', () => {
    const out = render('<a href="https://example.com/a?next=__LINK__">go</a>', 'javascript:alert(1)');
    expect(out.html).toContain('href="https://example.com/a?next=javascript:alert(1)"');
  });

  test.each([
    ['<img src="__LINK__">', 'src'],
    ["<img src='__LINK__' alt=x>", 'src'],
    ['<img alt="x" src=__LINK__>', 'src'],
    ['<form action="__LINK__"></form>', 'action'],
    ['<button formaction="__LINK__">x</button>', 'formaction'],
    ['<img srcset="https://example.com/a.png 1x, __LINK__ 2x">', 'srcset'],
    ['<A HREF="__LINK__">x</A>', 'href'],
    ['<svg><a xlink:href="__LINK__">x</a></svg>', 'xlink:href'],
  ])('when a macro fills the address of %s, then only http(s) is allowed there', (html, attribute) => {
    expect(refusal(html, 'javascript:alert(1)')).toBeInstanceOf(UnsafeMacroUrlError);
    expect(refusal(html, 'data:image/png;base64,AAAA')).toBeInstanceOf(UnsafeMacroUrlError);
    const mailto = refusal(html, 'mailto:a@example.com');
    if (attribute === 'href' || attribute === 'xlink:href') expect(mailto).toBeUndefined();
    else expect(mailto).toMatchObject({ message: `Macro __LINK__ in a ${attribute} attribute must give an http, https URL` });
    expect(refusal(html, 'https://example.com/a.png')).toBeUndefined();
  });

  test('when a macro is in text or a non-URL attribute, then its value is only escaped', () => {
    const out = render('<p title="__LINK__">__LINK__</p>', 'javascript:alert(1)');
    expect(out.html).toContain('<p title="javascript:alert(1)">javascript:alert(1)</p>');
    expect(out.text).toBe('T javascript:alert(1)');
  });

  test('when the refused value carries an address, then the error message does not repeat it', () => {
    const err = refusal('<a href="__LINK__">x</a>', 'javascript:fetch("//x?u=jane@example.com")') as Error;
    expect(err.message).not.toContain('jane');
  });
});
