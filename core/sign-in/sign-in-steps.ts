import { RateLimitedError } from '../platform/errors/app-error.js';
import type { BudgetState } from '../platform/throttling/rate-limit-headers.js';
import { parsePasskeyAnswer, type PasskeyAnswer, type PasskeyOutcome } from './passkey-answer.js';
import type { LoginLimits } from './login-rate-limits.js';
import type { LoginState, LoginStatesRepository } from './login-states.repository.js';
import type { LoginService } from './login.service.js';
import type { SignInClient } from './sign-in-users.js';
import { USER_ID_RE } from '../users/user-id.js';
import { SIGN_IN_CHALLENGE_LIFETIME_MS } from './passkey-challenge-lifetime.js';

const CODE_RE = /^[0-9]{6}$/;

export interface SignInStepsDeps {
  login: LoginService;
  states: LoginStatesRepository;
  limits: Pick<LoginLimits, 'consumeIp'>;
  passkeys: { verify(client: SignInClient, answer: PasskeyAnswer, challenge: string, address: string): Promise<PasskeyOutcome> };
  now?: () => Date;
}

/** What counting a form post against the caller address's budget gave: where it stands, or the refusal. */
export type PostAdmission = { budget: BudgetState; refusal?: undefined } | { budget?: undefined; refusal: RateLimitedError };

/** Why the login page is shown again instead of going on: the person can fix it on the page. */
export type LoginProblem =
  | { kind: 'bad-user-id'; userId: string }
  | { kind: 'bad-code' }
  | { kind: 'wrong-code'; attemptsLeft: number }
  | { kind: 'code-locked' }
  | { kind: 'code-expired' }
  | { kind: 'passkey-incomplete' }
  | { kind: 'passkey-out-of-date' }
  | { kind: 'unknown-passkey' }
  | { kind: 'passkey-not-verified' }
  | { kind: 'form-incomplete' }
  /**
   * A budget is spent: the refusal says how long to wait. `address` when it is the caller address's
   * budget of form posts (whatever the user: the sign-in has done nothing wrong), `user` when it is
   * one of the budgets of steps and codes for the user id given.
   */
  | { kind: 'rate-limited'; refusal: RateLimitedError; budget: 'address' | 'user' };

/** Where the sign-in goes after one form post. */
export type SignInNext =
  /** The login page of the state (the user-id page, or the code page once a user id was given). */
  | { kind: 'login-page'; state: LoginState; problem?: LoginProblem; notice?: 'code-sent' }
  /** Back to the same page by GET (post/redirect/get: a reload sends nothing again). */
  | { kind: 'same-page' }
  | { kind: 'signed-in'; userId: string }
  /** The sign-in cannot go on from here; the person must act elsewhere. */
  | { kind: 'stopped'; reason: 'sign-in-locked' | 'not-active' | 'refused' }
  /** The consent form: the edge answers it with the authorization server. */
  | { kind: 'consent'; allow: boolean };

export interface SignInStep {
  next: SignInNext;
  /** Work to do once the answer has left (sending a login code), so its cost never shows in the answer. */
  afterAnswer?: () => Promise<void>;
}

/** The fields of a sign-in form post (untrusted: anything may be missing or of another type). */
export type SignInForm = Record<string, unknown>;

const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');

/**
 * The rules of the login interaction: which step a form post is, what it checks, and which page
 * comes next (user id → login code → signed in, or a passkey instead). The HTTP edge reads the
 * form and renders the answer; every decision is made here.
 */
export function createSignInSteps(deps: SignInStepsDeps) {
  const now = deps.now ?? (() => new Date());
  const page = (state: LoginState, problem?: LoginProblem): SignInStep => ({ next: { kind: 'login-page', state, problem } });

  async function userStep(state: LoginState, client: SignInClient, form: SignInForm, address: string): Promise<SignInStep> {
    const userId = text(form.userId);
    if (!USER_ID_RE.test(userId)) return page(state, { kind: 'bad-user-id', userId });
    const step = await deps.login.start(state, client, userId, address);
    if (step.kind === 'sign-in-locked') return { next: { kind: 'stopped', reason: 'sign-in-locked' } };
    return { next: { kind: 'same-page' }, afterAnswer: step.afterAnswer };
  }

  async function codeStep(state: LoginState, client: SignInClient, form: SignInForm, address: string): Promise<SignInStep> {
    if (state.userId === undefined) return { next: { kind: 'same-page' } };
    const code = text(form.otp);
    if (!CODE_RE.test(code)) return page(state, { kind: 'bad-code' });
    const outcome = await deps.login.verify(state, client, code, address);
    switch (outcome.kind) {
      case 'signed-in':
        return { next: { kind: 'signed-in', userId: outcome.userId } };
      case 'wrong-code':
        return page(state, { kind: 'wrong-code', attemptsLeft: outcome.attemptsLeft });
      case 'locked':
        return page(state, { kind: 'code-locked' });
      case 'expired':
        return page(state, { kind: 'code-expired' });
      default:
        return { next: { kind: 'stopped', reason: outcome.kind } };
    }
  }

  async function passkeyStep(state: LoginState, client: SignInClient, form: SignInForm, address: string): Promise<SignInStep> {
    // Taken before anything is checked: a challenge answers once, whatever the answer.
    const issuedAfter = new Date(now().getTime() - SIGN_IN_CHALLENGE_LIFETIME_MS);
    const challenge = await deps.states.takePasskeyChallenge(state.uid, issuedAfter);
    const answer = parsePasskeyAnswer(form.credential);
    if (state.userId !== undefined) return { next: { kind: 'same-page' } };
    if (!answer) return page(state, { kind: 'passkey-incomplete' });
    if (challenge === undefined) return page(state, { kind: 'passkey-out-of-date' });
    const outcome = await deps.passkeys.verify(client, answer, challenge, address);
    switch (outcome.kind) {
      case 'signed-in':
        return { next: { kind: 'signed-in', userId: outcome.userId } };
      case 'unknown-passkey':
        return page(state, { kind: 'unknown-passkey' });
      case 'not-verified':
        return page(state, { kind: 'passkey-not-verified' });
      default:
        return { next: { kind: 'stopped', reason: outcome.kind } };
    }
  }

  async function resendStep(state: LoginState, client: SignInClient, address: string): Promise<SignInStep> {
    const step = await deps.login.resend(state, client, address);
    if (step.kind === 'sign-in-locked') return { next: { kind: 'stopped', reason: 'sign-in-locked' } };
    return { next: { kind: 'login-page', state, notice: 'code-sent' }, afterAnswer: step.afterAnswer };
  }

  async function stepOf(state: LoginState, client: SignInClient, form: SignInForm, address: string): Promise<SignInStep> {
    switch (form.step) {
      case 'user':
        return userStep(state, client, form, address);
      case 'code':
        return codeStep(state, client, form, address);
      case 'passkey':
        return passkeyStep(state, client, form, address);
      case 'resend':
        return resendStep(state, client, address);
      case 'restart':
        await deps.states.clearUser(state.uid);
        return { next: { kind: 'same-page' } };
      case 'consent':
        return { next: { kind: 'consent', allow: form.decision === 'allow' } };
      default:
        return page(state, { kind: 'form-incomplete' });
    }
  }

  return {
    /**
     * Counts one form post against the caller address's budget, before anything is read for it:
     * posts refused later (a stale CSRF token, a sign-in that expired) cost store reads too, so
     * they count as steps do. A spent budget is an answer here, not an error.
     */
    async admit(address: string): Promise<PostAdmission> {
      try {
        return { budget: await deps.limits.consumeIp(address) };
      } catch (err) {
        if (!(err instanceof RateLimitedError)) throw err;
        return { refusal: err };
      }
    },

    /**
     * One form post of the login interaction (its CSRF token already checked, the address's
     * budget already counted by `admit`). A spent budget (that one or a user's) shows the login
     * page again with the wait, made from the state this post was checked against.
     */
    async post(state: LoginState, client: SignInClient, form: SignInForm, address: string, admission: PostAdmission): Promise<SignInStep> {
      // Refused before any step: the state just read for the CSRF check is the state now.
      if (admission.refusal) return page(state, { kind: 'rate-limited', refusal: admission.refusal, budget: 'address' });
      try {
        return await stepOf(state, client, form, address);
      } catch (err) {
        if (!(err instanceof RateLimitedError)) throw err;
        // Refused by a budget of the user id given: every step asks its budgets before it writes
        // the fields the page is made from (user id, CSRF token), so the state read for the CSRF
        // check is still what the page shows. (The passkey step uses up its challenge first; the
        // user-id page shown again gets a new one.) Reading it again would cost each refusal one read more.
        return page(state, { kind: 'rate-limited', refusal: err, budget: 'user' });
      }
    },
  };
}

export type SignInSteps = ReturnType<typeof createSignInSteps>;
