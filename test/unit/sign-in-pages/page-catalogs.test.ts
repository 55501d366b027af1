import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { catalogsDir, readCatalog, translate, translateCount, translateHtml } from '../../../api/auth-server/page-catalogs.js';
import { renderPage } from '../../../api/auth-server/login-pages.js';
import { BASE_LOCALE, SHIPPED_LOCALES } from '../../../core/platform/locales/shipped-locales.js';
import { projectRoot } from '../../../core/platform/project-root.js';

const placeholdersOf = (text: string) => [...text.matchAll(/\{\*?([A-Za-z]+)\}/g)].map((m) => m[0]).sort();

describe('the sign-in pages message catalogs', () => {
  test('when catalogs ship, then there is one file per shipped locale and no other', () => {
    const files = readdirSync(catalogsDir).filter((f) => f.endsWith('.json'));
    expect(files.map((f) => f.replace(/\.json$/, '')).sort()).toEqual([...SHIPPED_LOCALES].sort());
  });

  // A shipped catalog is complete: a page half in one language and half in English is not shipped.
  test.each(SHIPPED_LOCALES.filter((l) => l !== BASE_LOCALE))(
    'when %s ships, then it has exactly the keys and placeholders of English',
    (locale) => {
      const english = readCatalog(BASE_LOCALE);
      const other = readCatalog(locale);
      const missing = Object.keys(english).filter((key) => !(key in other));
      const unknown = Object.keys(other).filter((key) => !(key in english));
      expect({ missing, unknown }).toEqual({ missing: [], unknown: [] });
      const placeholdersDiffer = Object.keys(english).filter(
        (key) => JSON.stringify(placeholdersOf(english[key] as string)) !== JSON.stringify(placeholdersOf(other[key] as string)),
      );
      expect(placeholdersDiffer).toEqual([]);
    },
  );

  test('when the templates and the code use keys, then every key is in English and every English key is used', () => {
    const sources = [
      ...readdirSync(join(projectRoot, 'templates', 'pages')).map((f) => readFileSync(join(projectRoot, 'templates', 'pages', f), 'utf8')),
      ...['login-responses.ts', 'auth-server.ts', 'interaction.routes.ts', 'scope-labels.ts', 'oauth-error-message.ts'].map((f) =>
        readFileSync(join(projectRoot, 'api', 'auth-server', f), 'utf8'),
      ),
    ].join('\n');
    const english = readCatalog(BASE_LOCALE);
    const usedInTemplates = [...sources.matchAll(/\{\{t "([^"]+)"/g)].map((m) => m[1] as string);
    expect(usedInTemplates.filter((key) => !(key in english))).toEqual([]);
    // Keys built in code (`${key}.title`, plural forms, scope.<name>) are found by their stem.
    const unused = Object.keys(english).filter((key) => {
      const stem = key.replace(/\.(one|other|title|message)$/, '');
      return !sources.includes(`'${key}'`) && !sources.includes(`"${key}"`) && !sources.includes(`'${stem}'`) && !key.startsWith('scope.');
    });
    expect(unused).toEqual([]);
  });

  test('when a text has values, then they are filled in, escaped in HTML and bold where the catalog says so', () => {
    expect(translate('en', 'logout.appAsks', { app: 'Acme {code}' })).toBe('Acme {code} asks to sign you out.');
    expect(String(translateHtml('fr', 'page.signingInTo', { app: '<b>Acme</b> & co' }))).toBe(
      'Connexion à <strong>&lt;b&gt;Acme&lt;/b&gt; &amp; co</strong>',
    );
  });

  test('when a text counts, then the language picks the plural form (French and Portuguese count 0 and 1 as one, German and Spanish only 1)', () => {
    expect(translateCount('en', 'problem.wrongCode', 1)).toBe('That code is not right. 1 attempt left.');
    expect(translateCount('en', 'problem.wrongCode', 0)).toBe('That code is not right. 0 attempts left.');
    expect(translateCount('fr', 'problem.wrongCode', 0)).toBe('Ce code est incorrect. Il vous reste 0 essai.');
    expect(translateCount('fr', 'problem.wrongCode', 4)).toBe('Ce code est incorrect. Il vous reste 4 essais.');
    expect(translateCount('de', 'problem.wrongCode', 1)).toBe('Der Code ist nicht richtig. Sie haben noch 1 Versuch.');
    expect(translateCount('de', 'problem.wrongCode', 0)).toBe('Der Code ist nicht richtig. Sie haben noch 0 Versuche.');
    expect(translateCount('es', 'problem.wrongCode', 1)).toBe('El código no es correcto. Le queda 1 intento.');
    expect(translateCount('es', 'problem.wrongCode', 0)).toBe('El código no es correcto. Le quedan 0 intentos.');
    expect(translateCount('pt', 'problem.wrongCode', 1)).toBe('Esse código não está correto. Resta 1 tentativa.');
    expect(translateCount('pt', 'problem.wrongCode', 2)).toBe('Esse código não está correto. Restam 2 tentativas.');
  });

  test('when the 429 page tells the wait, then every language says one second in the singular and more in the plural', () => {
    const wait = (locale: (typeof SHIPPED_LOCALES)[number], seconds: number) =>
      /\b\d+ \p{L}+/u.exec(translateCount(locale, 'tooManyRequests.message', seconds))?.[0];
    const waits = Object.fromEntries(SHIPPED_LOCALES.map((locale) => [locale, [wait(locale, 1), wait(locale, 59)]]));
    expect(waits).toEqual({
      en: ['1 second', '59 seconds'],
      de: ['1 Sekunde', '59 Sekunden'],
      es: ['1 segundo', '59 segundos'],
      fr: ['1 seconde', '59 secondes'],
      pt: ['1 segundo', '59 segundos'],
    });
  });

  test('when a page renders in French, then <html lang> says so and no English of the page is left', () => {
    const { html } = renderPage('login-user', {
      locale: 'fr',
      title: translate('fr', 'user.title'),
      clientName: 'Acme',
      action: '/x',
      csrf: 'c',
      passkey: { challenge: 'ch', rpId: 'localhost', conditional: true },
    });
    expect(html).toContain('<html lang="fr">');
    expect(html).toContain('<label for="userId">Identifiant</label>');
    expect(html).toContain('data-not-used="Aucune clé d’accès n’a été utilisée. Réessayez ou continuez avec votre identifiant."');
    for (const english of ['Signing in', 'User ID', 'Continue', 'passkey', 'No passkey'])
      expect(html).not.toMatch(new RegExp(`>${english}\\b`));
    expect(html).not.toContain('No passkey was used');
  });
});
