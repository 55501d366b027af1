import { request as httpRequest } from 'node:http';
import { eventually, readOutbox } from './otp-helpers.js';
import { queueSettled } from './queue-state.js';
import { warningsIn, type TestService } from './test-service.js';
import { insertUser } from './user-fixtures.js';

/** One HTTP answer of the form walker, body read. */
export interface Page {
  url: string;
  status: number;
  headers: Headers;
  html: string;
}

/**
 * A cookie-keeping HTTP client that walks the sign-in pages as a browser without JavaScript
 * would: GETs, form posts, and redirects followed by hand until they leave the service (the
 * app's redirect URI), whose URL is then returned instead of fetched.
 */
export class FormWalker {
  private readonly cookies = new Map<string, string>();
  private readonly localAddress: string | undefined;
  private readonly forwardedFor: Record<string, string>;

  /**
   * `from`: the loopback address to send from (127.0.0.2, ...), a caller elsewhere as the server
   * sees it; or `{ forwardedFor }`, the address a trusted proxy reports (`X-Forwarded-For`, for a
   * service started with `TRUST_PROXY=1`), for callers no loopback address can stand for (IPv6).
   */
  constructor(
    private readonly serviceUrl: string,
    from?: string | { forwardedFor: string },
    /** Sent with every request, as a browser sends its settings (`accept-language`). */
    private readonly browserHeaders: Record<string, string> = {},
  ) {
    this.localAddress = typeof from === 'string' ? from : undefined;
    this.forwardedFor = typeof from === 'object' ? { 'x-forwarded-for': from.forwardedFor } : {};
  }

  private send(url: string, init: { method: string; headers: Record<string, string>; body?: string }): Promise<Response> {
    if (this.localAddress === undefined) return fetch(url, { ...init, redirect: 'manual' });
    return new Promise((resolve, reject) => {
      const req = httpRequest(url, { method: init.method, headers: init.headers, localAddress: this.localAddress }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one);
          }
          resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 0, headers }));
        });
      });
      req.on('error', reject);
      req.end(init.body);
    });
  }

  private remember(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = (pair ?? '').indexOf('=');
      if (eq <= 0) continue;
      const name = (pair as string).slice(0, eq).trim();
      const value = (pair as string).slice(eq + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  /**
   * Posts a form and hangs up `afterMs` later, before the answer arrives: a person whose phone
   * lost its network, or who closed the tab, right after pressing the button.
   */
  postAndHangUp(url: string, form: Record<string, string>, afterMs: number): Promise<void> {
    return new Promise((resolve) => {
      const req = httpRequest(url, {
        method: 'POST',
        headers: { cookie: this.cookieHeader(), ...this.forwardedFor, 'content-type': 'application/x-www-form-urlencoded' },
        ...(this.localAddress === undefined ? {} : { localAddress: this.localAddress }),
      });
      req.on('response', () => resolve());
      req.on('error', () => resolve());
      req.end(new URLSearchParams(form).toString());
      setTimeout(() => req.destroy(), afterMs);
    });
  }

  /** Set-Cookie lines of the last answers (for attribute checks). */
  readonly setCookieLines: string[] = [];

  /** `follow: false` returns the first redirect's target instead of following it. */
  async request(
    url: string,
    init: { method?: string; form?: Record<string, string>; follow?: boolean } = {},
  ): Promise<Page | { redirectedTo: string }> {
    let current = url;
    let method = init.method ?? (init.form ? 'POST' : 'GET');
    let body: string | undefined = init.form ? new URLSearchParams(init.form).toString() : undefined;
    for (let hops = 0; hops < 20; hops += 1) {
      if (!current.startsWith(this.serviceUrl)) return { redirectedTo: current };
      const res = await this.send(current, {
        method,
        headers: {
          ...this.browserHeaders,
          cookie: this.cookieHeader(),
          ...this.forwardedFor,
          ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        ...(body !== undefined ? { body } : {}),
      });
      this.setCookieLines.push(...res.headers.getSetCookie());
      this.remember(res.headers);
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        current = new URL(location, current).toString();
        if (init.follow === false) return { redirectedTo: current };
        method = 'GET';
        body = undefined;
        continue;
      }
      return { url: current, status: res.status, headers: res.headers, html: await res.text() };
    }
    throw new Error('too many redirects');
  }

  async page(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Page> {
    const result = await this.request(url, init);
    if ('redirectedTo' in result) throw new Error(`expected a page, was redirected to ${result.redirectedTo}`);
    return result;
  }

  async leaves(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<string> {
    const result = await this.request(url, init);
    if (!('redirectedTo' in result)) throw new Error(`expected to leave the service, got ${result.status}: ${result.html.slice(0, 500)}`);
    return result.redirectedTo;
  }
}

export function csrfOf(html: string): string {
  const match = /name="csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error(`no CSRF token in page: ${html.slice(0, 300)}`);
  return match[1] as string;
}

/**
 * The newest login code sent to this address (SMS or e-mail) after `since`, from the outbox, once
 * the sign-in it was sent for holds it (the code is generated after the page has answered and
 * attached to the sign-in right after it is queued, so a fast outbox could show it first).
 * `says`: how the message names itself in the sign-in's language (`/Anmeldecode/` in German).
 */
export async function loginCodeFor(service: TestService, to: string, since: Date, says = /sign-in code/): Promise<string> {
  const last = await eventually(async () => {
    const messages = (await readOutbox(service, to)).filter((m) => new Date(m.createdAt) >= since && says.test(m.text));
    messages.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    return messages[messages.length - 1];
  }).catch(async (err: unknown) => {
    throw new Error(`no sign-in code for ${to} since ${since.toISOString()}: ${await whySignInCodeMissing(service, to)}`, { cause: err });
  });
  const code = /\b(\d{6})\b/.exec(last.text)?.[1];
  if (!code) throw new Error(`no code in the message: ${last.text}`);
  if (last.otpUuid !== undefined) {
    const otpUuid = last.otpUuid;
    await eventually(async () => ((await service.ctx.mongo.collection('login_states').findOne({ otpUuid })) ? true : undefined));
  }
  return code;
}

/** What a test that waited in vain for a login code needs to know: the outbox, the sign-ins, what the service logged. */
async function whySignInCodeMissing(service: TestService, to: string): Promise<string> {
  const outbox = (await readOutbox(service, to)).map((m) => `${m.createdAt} ${m.text.slice(0, 60)}`);
  const states = await service.ctx.mongo
    .collection('login_states')
    .find({}, { projection: { _id: 0, userId: 1, otpUuid: 1, codeSentAt: 1 } })
    .toArray();
  const logged = warningsIn(service.logLines());
  return JSON.stringify({ outbox, states, logged }, null, 1);
}

/**
 * Signs `userId` in through the pages, from the authorization URL to the app's redirect URI
 * (returned). Starting a second time with the same walker reuses the session cookie.
 */
export async function signInWithForms(
  service: TestService,
  walker: FormWalker,
  authorizationUrl: string,
  userId: string,
  address: string,
): Promise<string> {
  const first = await walker.page(authorizationUrl);
  if (first.status !== 200 || !first.html.includes('name="userId"'))
    throw new Error(`no user id form: ${first.status} ${first.html.slice(0, 400)}`);
  const since = new Date();
  const codePage = await walker.page(first.url, { form: { csrf: csrfOf(first.html), step: 'user', userId } });
  if (!codePage.html.includes('name="otp"')) throw new Error(`no code form: ${codePage.status} ${codePage.html.slice(0, 400)}`);
  const code = await loginCodeFor(service, address, since);
  let after = await walker.request(codePage.url, { form: { csrf: csrfOf(codePage.html), step: 'code', otp: code } });
  // Another account was signed in in this browser: the provider ends that session first with a
  // form a browser posts by itself, then finishes this sign-in.
  const autoPost = 'redirectedTo' in after ? null : /<form method="post" action="([^"]+\/session\/end\/confirm)">/.exec(after.html);
  if (autoPost && !('redirectedTo' in after)) {
    const fields = Object.fromEntries(
      [...after.html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/>/g)].map((m) => [m[1], m[2]]),
    );
    after = await walker.request(autoPost[1] as string, { form: fields as Record<string, string> });
  }
  if ('redirectedTo' in after) return after.redirectedTo;
  // A consent page (client that is not first-party): allow.
  if (after.html.includes('name="decision"'))
    return walker.leaves(after.url, { form: { csrf: csrfOf(after.html), step: 'consent', decision: 'allow' } });
  throw new Error(`sign-in did not finish: ${after.status} ${after.html.slice(0, 600)}`);
}

let settleRuns = 0;
/** The control sign-in comes from an address of its own, so it spends none of the test's per-address budget. */
const SETTLE_ADDRESS = '127.0.0.254';

/**
 * Waits until every sign-in step answered so far has done what it does after answering, so a
 * test can then assert that one of them sent nothing. A login code is generated only after its
 * page has answered (the page costs a known and an unknown user id the same), and a step that
 * sends nothing leaves no trace to wait on. So one more step is taken, for a fresh user who can
 * receive a code: the steps before it started their after-answer work before it started its own,
 * which is the same work or more. Once its code is in the outbox and the dispatch queue holds
 * nothing that may still run, whatever the earlier steps queued has been sent.
 */
export async function loginCodesSettled(service: TestService, authorizationUrl: string): Promise<void> {
  settleRuns += 1;
  const userId = `settle-${settleRuns}`;
  const mobile = `+1555099${String(settleRuns).padStart(4, '0')}`;
  await insertUser(service.ctx.mongo, { userId, mobileNumber: mobile });
  const walker = new FormWalker(service.url, SETTLE_ADDRESS);
  const first = await walker.page(authorizationUrl);
  const since = new Date();
  const codePage = await walker.page(first.url, { form: { csrf: csrfOf(first.html), step: 'user', userId } });
  if (!codePage.html.includes('name="otp"')) throw new Error(`no code form: ${codePage.status} ${codePage.html.slice(0, 400)}`);
  await loginCodeFor(service, mobile, since);
  await queueSettled(service.ctx.queues.dispatch);
}
