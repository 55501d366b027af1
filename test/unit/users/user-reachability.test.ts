import { canSignIn, isReachable } from '../../../core/users/user-reachability.js';
import type { User, UserStatus } from '../../../core/users/user.types.js';

// One rule for whom the service sends something (OTPs, login codes, notifications) and one for
// whom it lets in; every path asks these two.
describe('user reachability', () => {
  const user = (status: UserStatus, blocked = false) =>
    ({ enterpriseId: 'acme', userId: 'ana', status, ...(blocked ? { blocked: { at: new Date() } } : {}) }) as User;

  test.each([
    ['an unknown user', undefined, false, false],
    ['a CREATED user', user('CREATED'), true, false],
    ['an ONBOARDING user', user('ONBOARDING'), true, false],
    ['an ACTIVE user', user('ACTIVE'), true, true],
    ['a blocked ACTIVE user', user('ACTIVE', true), false, false],
    ['a blocked pending user', user('CREATED', true), false, false],
    ['a DELETED user', user('DELETED'), false, false],
  ])('%s: reachable %s, may sign in %s', (_, u, reachable, signIn) => {
    expect(isReachable(u)).toBe(reachable);
    expect(canSignIn(u)).toBe(signIn);
  });
});
