import { startDispatchWorker } from '../../workers/dispatch/dispatch-worker.js';
import { authorizeUrl, registerTestApp, type TestApp } from '../support/oauth-flow-helpers.js';
import { eventually, readOutbox, type OutboxEntry } from '../support/otp-helpers.js';
import { csrfOf, FormWalker } from '../support/sign-in-helpers.js';
import { memoryLogger, startTestService, type TestService } from '../support/test-service.js';
import { insertUser } from '../support/user-fixtures.js';

/** A service with these settings, the app 'Banque Acme' registered on it, and (when asked) a dispatch worker sending its login codes. */
async function startSignInService(name: string, env: Record<string, string>, withWorker: boolean) {
  const service = await startTestService(name, env, { ownPublicUrl: true });
  const app = await registerTestApp(service, { name: 'Banque Acme' });
  const worker = withWorker ? await startDispatchWorker(service.config, memoryLogger().logger) : undefined;
  return {
    service,
    app,
    async close() {
      await worker?.shutdown();
      await service.close();
    },
  };
}

/** The sign-in pages in the user's language: the app's ui_locales, else the browser's Accept-Language, else English. */
describe('sign-in: the pages speak the language the app or the browser asks for', () => {
  let service: TestService;
  let app: TestApp;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ service, app, close } = await startSignInService('signin-languages', { RATE_LIMIT_LOGIN_PER_IP: '100000' }, true));
    await insertUser(service.ctx.mongo, { userId: 'amelie', mobileNumber: '+15550410001' });
    await insertUser(service.ctx.mongo, { userId: 'bruno', emailId: 'bruno@example.com' });
    await insertUser(service.ctx.mongo, { userId: 'carl', mobileNumber: '+15550410003' });
    await insertUser(service.ctx.mongo, { userId: 'elena', mobileNumber: '+15550410006' });
    await insertUser(service.ctx.mongo, { userId: 'dieter', emailId: 'dieter@example.com' });
    await insertUser(service.ctx.mongo, { userId: 'joao', mobileNumber: '+15550410007' });
  });
  afterAll(() => close());

  const langOf = (html: string) => /<html lang="([^"]*)">/.exec(html)?.[1];

  test('when the app asks ui_locales=fr, then the user-id page is in French, with its CSP and CSRF token as in English', async () => {
    const page = await new FormWalker(service.url).page(authorizeUrl(service, app, { ui_locales: 'fr' }));
    expect(page.status).toBe(200);
    expect(langOf(page.html)).toBe('fr');
    expect(page.html).toContain('<title>Connexion · Banque Acme</title>');
    expect(page.html).toContain('Connexion à <strong>Banque Acme</strong>');
    expect(page.html).toContain('<label for="userId">Identifiant</label>');
    expect(page.html).toContain('Se connecter avec une clé d’accès');
    expect(page.html).not.toMatch(/User ID|Continue<|Sign in with a passkey/);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'nonce-[^']+'; style-src 'nonce-/);
    expect(csrfOf(page.html)).toMatch(/.{16,}/);
  });

  test('when ui_locales names a region or comes first, then its language wins over the browser', async () => {
    const walker = new FormWalker(service.url, undefined, { 'accept-language': 'en-US,en;q=0.9' });
    const page = await walker.page(authorizeUrl(service, app, { ui_locales: 'nl-NL fr-CA en' }));
    expect(langOf(page.html)).toBe('fr');
    expect(page.html).toContain('<label for="userId">Identifiant</label>');
  });

  test('when only the browser asks for French, then every step of the sign-in is in French, its errors included', async () => {
    const walker = new FormWalker(service.url, undefined, { 'accept-language': 'fr-FR,fr;q=0.9' });
    const first = await walker.page(authorizeUrl(service, app));
    expect(langOf(first.html)).toBe('fr');
    // A user id nobody has gets the same code page: the code step can be seen without sending anything.
    const codePage = await walker.page(first.url, { form: { csrf: csrfOf(first.html), step: 'user', userId: 'personne' } });
    expect(langOf(codePage.html)).toBe('fr');
    expect(codePage.html).toContain('<h1>Saisissez votre code</h1>');
    expect(codePage.html).toContain('Si <strong>personne</strong> est enregistré');
    expect(codePage.html).toContain('Envoyer un nouveau code');
    const wrong = await walker.page(codePage.url, { form: { csrf: csrfOf(codePage.html), step: 'code', otp: '000000' } });
    expect(wrong.status).toBe(400);
    expect(wrong.html).toContain('Ce code est incorrect. Il vous reste 4 essais.');
    const badForm = await walker.page(codePage.url, { form: { csrf: csrfOf(codePage.html) } });
    expect(badForm.status).toBe(400);
    expect(badForm.html).toContain('Il manquait une information dans ce formulaire. Veuillez réessayer.');
  });

  test.each([
    ['no header', undefined],
    ['a language not shipped', 'nl-NL,nl;q=0.9,ja;q=0.8'],
    ['garbage', '../../templates/locales/fr, f r;q=1, fr;q=abc, fr;q=-1, *, <fr>'],
    ['a huge header', `${'nl-NL;q=0.9,'.repeat(700)}fr`],
  ])('when the browser sends %s, then the page is in English, 200, with no error', async (_, acceptLanguage) => {
    const walker = new FormWalker(service.url, undefined, acceptLanguage === undefined ? {} : { 'accept-language': acceptLanguage });
    const page = await walker.page(authorizeUrl(service, app));
    expect(page.status).toBe(200);
    expect(langOf(page.html)).toBe('en');
    expect(page.html).toContain('<label for="userId">User ID</label>');
    expect(page.html).toContain('Signing in to <strong>Banque Acme</strong>');
  });

  test('when a page is reached without a sign-in, then the expired page follows the browser language', async () => {
    const res = await fetch(`${service.url}/svc/authserver/interaction/unknown-uid`, { headers: { 'accept-language': 'fr' } });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(langOf(html)).toBe('fr');
    expect(html).toContain('<h1>Cette connexion a expiré</h1>');
  });

  test('when the authorization request is refused on a page, then the error page is in the language asked', async () => {
    const res = await fetch(authorizeUrl(service, app, { client_id: 'no-such-app', ui_locales: 'fr' }), {
      headers: { 'accept-language': 'fr' },
    });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(langOf(html)).toBe('fr');
    expect(html).toContain('<h1>Erreur de connexion</h1>');
    expect(html).toContain('(invalid_client');
  });

  /** The message the user-id step of this walker's sign-in sent to `to`. */
  async function codeMessageOf(walker: FormWalker, url: string, userId: string, to: string): Promise<OutboxEntry> {
    const first = await walker.page(url);
    const since = new Date();
    await walker.page(first.url, { form: { csrf: csrfOf(first.html), step: 'user', userId } });
    return eventually(async () => (await readOutbox(service, to)).find((m) => new Date(m.createdAt) >= since));
  }

  test('when the sign-in is in French, then the login code comes by SMS in French', async () => {
    const sms = await codeMessageOf(
      new FormWalker(service.url),
      authorizeUrl(service, app, { ui_locales: 'fr' }),
      'amelie',
      '+15550410001',
    );
    expect(sms.channel).toBe('SMS');
    expect(sms.text).toMatch(/^Votre code de connexion à Banque Acme est \d{6}\. Il expire dans 5 minutes\./);
  });

  test('when the sign-in is in French, then the login code e-mail is in French: subject, text and HTML with lang="fr"', async () => {
    const walker = new FormWalker(service.url, undefined, { 'accept-language': 'fr-FR,fr;q=0.9' });
    const mail = await codeMessageOf(walker, authorizeUrl(service, app), 'bruno', 'bruno@example.com');
    expect(mail.subject).toBe('Votre code de connexion à Banque Acme');
    expect(mail.text).toMatch(/^Votre code de connexion à Banque Acme est \d{6}\./);
    expect(mail.html).toContain('<html lang="fr">');
    expect(mail.html).toContain('Vous recevez ce message parce qu’il a été demandé pour votre compte.');
    expect(mail.html).not.toMatch(/Your sign-in code|You receive this message/);
  });

  test('when the app asks ui_locales=es, then the user-id and code pages are in Spanish and the code comes by SMS in Spanish', async () => {
    const walker = new FormWalker(service.url);
    const first = await walker.page(authorizeUrl(service, app, { ui_locales: 'es' }));
    expect(first.status).toBe(200);
    expect(langOf(first.html)).toBe('es');
    expect(first.html).toContain('<title>Iniciar sesión · Banque Acme</title>');
    expect(first.html).toContain('Inicio de sesión en <strong>Banque Acme</strong>');
    expect(first.html).toContain('<label for="userId">ID de usuario</label>');
    expect(first.html).not.toMatch(/User ID|Continue<|Sign in with a passkey/);
    const since = new Date();
    const codePage = await walker.page(first.url, { form: { csrf: csrfOf(first.html), step: 'user', userId: 'elena' } });
    expect(langOf(codePage.html)).toBe('es');
    expect(codePage.html).toContain('<h1>Escriba su código</h1>');
    expect(codePage.html).toContain('Si <strong>elena</strong> está registrado');
    expect(codePage.html).toContain('Caduca en 5 minutos.');
    const sms = await eventually(async () => (await readOutbox(service, '+15550410006')).find((m) => new Date(m.createdAt) >= since));
    expect(sms.text).toMatch(
      /^Su código de inicio de sesión para Banque Acme es \d{6}\. Caduca en 5 minutos\. No lo comparta con nadie\.$/,
    );
    const wrong = await walker.page(codePage.url, { form: { csrf: csrfOf(codePage.html), step: 'code', otp: '000000' } });
    expect(wrong.status).toBe(400);
    expect(wrong.html).toContain('El código no es correcto. Le quedan 4 intentos.');
  });

  test('when the browser asks de-AT, then the pages are in German and the login code e-mail too: subject, text and HTML with lang="de"', async () => {
    const walker = new FormWalker(service.url, undefined, { 'accept-language': 'de-AT,de;q=0.9,en;q=0.8' });
    const first = await walker.page(authorizeUrl(service, app));
    expect(langOf(first.html)).toBe('de');
    expect(first.html).toContain('<label for="userId">Benutzer-ID</label>');
    expect(first.html).toContain('Mit einem Passkey anmelden');
    const since = new Date();
    const codePage = await walker.page(first.url, { form: { csrf: csrfOf(first.html), step: 'user', userId: 'dieter' } });
    expect(langOf(codePage.html)).toBe('de');
    expect(codePage.html).toContain('<h1>Code eingeben</h1>');
    expect(codePage.html).toContain('Er ist 5 Minuten gültig.');
    expect(codePage.html).toContain('Neuen Code senden');
    const mail = await eventually(async () =>
      (await readOutbox(service, 'dieter@example.com')).find((m) => new Date(m.createdAt) >= since),
    );
    expect(mail.subject).toBe('Ihr Anmeldecode für Banque Acme');
    expect(mail.text).toMatch(
      /^Ihr Anmeldecode für Banque Acme lautet \d{6}\.\n\nEr ist 5 Minuten gültig\. Geben Sie ihn an niemanden weiter\./,
    );
    expect(mail.html).toContain('<html lang="de">');
    expect(mail.html).toContain('Sie erhalten diese Nachricht, weil sie für Ihr Konto angefordert wurde.');
    expect(mail.html).not.toMatch(/Your sign-in code|You receive this message/);
  });

  test('when the app asks ui_locales=pt-BR, then the pages are in Portuguese and the code comes by SMS in Portuguese', async () => {
    const walker = new FormWalker(service.url);
    const first = await walker.page(authorizeUrl(service, app, { ui_locales: 'pt-BR' }));
    expect(langOf(first.html)).toBe('pt');
    expect(first.html).toContain('<label for="userId">ID de usuário</label>');
    const since = new Date();
    const codePage = await walker.page(first.url, { form: { csrf: csrfOf(first.html), step: 'user', userId: 'joao' } });
    expect(codePage.html).toContain('<h1>Digite seu código</h1>');
    expect(codePage.html).toContain('Ele expira em 5 minutos.');
    const sms = await eventually(async () => (await readOutbox(service, '+15550410007')).find((m) => new Date(m.createdAt) >= since));
    expect(sms.text).toMatch(/^Seu código de acesso para Banque Acme é \d{6}\. Ele expira em 5 minutos\. Não o compartilhe com ninguém\.$/);
  });

  test('when the sign-in is in English, then the login code is the English template, as before', async () => {
    const sms = await codeMessageOf(new FormWalker(service.url), authorizeUrl(service, app, { ui_locales: 'ja' }), 'carl', '+15550410003');
    expect(sms.text).toMatch(/^Your sign-in code for Banque Acme is \d{6}\./);
  });
});

describe('sign-in: SIGN_IN_DEFAULT_LOCALE', () => {
  let service: TestService;
  let app: TestApp;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ service, app, close } = await startSignInService('signin-default-locale', { SIGN_IN_DEFAULT_LOCALE: 'fr' }, false));
  });
  afterAll(() => close());

  test('when neither the app nor the browser names a shipped language, then the pages are in the default; a browser asking English gets English', async () => {
    const url = authorizeUrl(service, app);
    const unnamed = await new FormWalker(service.url, undefined, { 'accept-language': 'ja' }).page(url);
    expect(unnamed.html).toContain('<html lang="fr">');
    expect(unnamed.html).toContain('<label for="userId">Identifiant</label>');
    const english = await new FormWalker(service.url, undefined, { 'accept-language': 'en-GB' }).page(url);
    expect(english.html).toContain('<html lang="en">');
  });
});

describe('sign-in: the code page and the login code say the lifetime LOGIN_CODE_TTL_SECONDS gives', () => {
  let service: TestService;
  let app: TestApp;
  let close: () => Promise<void>;

  beforeAll(async () => {
    ({ service, app, close } = await startSignInService('signin-code-lifetime', { LOGIN_CODE_TTL_SECONDS: '600' }, true));
    await insertUser(service.ctx.mongo, { userId: 'dora', mobileNumber: '+15550410004' });
    await insertUser(service.ctx.mongo, { userId: 'emile', mobileNumber: '+15550410005' });
  });
  afterAll(() => close());

  /** The code page of this user id, and the SMS its user-id step sent. */
  async function codeStep(uiLocales: string, userId: string, to: string): Promise<{ page: string; sms: OutboxEntry }> {
    const walker = new FormWalker(service.url);
    const first = await walker.page(authorizeUrl(service, app, { ui_locales: uiLocales }));
    const since = new Date();
    const codePage = await walker.page(first.url, { form: { csrf: csrfOf(first.html), step: 'user', userId } });
    const sms = await eventually(async () => (await readOutbox(service, to)).find((m) => new Date(m.createdAt) >= since));
    return { page: codePage.html, sms };
  }

  test('when codes live 10 minutes, then the English page and SMS say 10 minutes, not 5', async () => {
    const { page, sms } = await codeStep('en', 'dora', '+15550410004');
    expect(page).toContain('It expires in 10 minutes.');
    expect(sms.text).toMatch(/^Your sign-in code for Banque Acme is \d{6}\. It expires in 10 minutes\./);
  });

  test('when codes live 10 minutes, then the French page and SMS say 10 minutes', async () => {
    const { page, sms } = await codeStep('fr', 'emile', '+15550410005');
    expect(page).toContain('Il expire dans 10 minutes.');
    expect(sms.text).toMatch(/^Votre code de connexion à Banque Acme est \d{6}\. Il expire dans 10 minutes\./);
  });
});
