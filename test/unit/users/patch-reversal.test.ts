import { reversalOf } from '../../../core/users/patch-reversal.js';
import type { User } from '../../../core/users/user.types.js';
import type { UserChanges } from '../../../core/users/users.repository.js';

/** The undo of a PATCH whose groups went away between its check and its write. */
describe('patch reversal', () => {
  const before: User = {
    enterpriseId: 'acme',
    userId: 'alice',
    loginId: 'alice',
    primaryGroup: 'retail',
    secondaryGroups: ['vip'],
    firstName: 'Ada',
    lastName: 'Lovelace',
    emailId: 'ada@example.com',
    status: 'CREATED',
    sourceType: 'SVC',
    clientId: 'c1',
    createdAt: new Date(0),
    updatedAt: new Date(1),
  };
  /** The user as `changes` left it, then as later patches changed it (`later`). */
  function stored(changes: UserChanges, later: Partial<User> = {}): User {
    const user: Record<string, unknown> = { ...before, updatedAt: new Date(2) };
    for (const [field, value] of Object.entries({ ...changes, ...later })) {
      if (value === null || value === undefined) delete user[field];
      else user[field] = value;
    }
    return user as unknown as User;
  }
  const keepNothing = { keepMobile: false };

  test('when nothing changed the user since the patch, then every field it changed goes back, removed contacts included', () => {
    const changes: UserChanges = { primaryGroup: 'gone', firstName: 'Alicia', emailId: null, mobileNumber: '+15550100001' };
    expect(reversalOf(stored(changes), before, changes, keepNothing)).toEqual({
      primaryGroup: 'retail',
      firstName: 'Ada',
      emailId: 'ada@example.com',
      mobileNumber: null,
    });
  });

  test('when a later patch changed a field again, then that field stays as the later patch left it', () => {
    const changes: UserChanges = { secondaryGroups: ['vip', 'gone'], lastName: 'Byron' };
    expect(reversalOf(stored(changes, { lastName: 'King' }), before, changes, keepNothing)).toEqual({ secondaryGroups: ['vip'] });
  });

  test('when the old mobile number went to another user meanwhile, then the new number stays and the rest goes back', () => {
    const changes: UserChanges = { primaryGroup: 'gone', mobileNumber: '+15550100002' };
    expect(reversalOf(stored(changes), { ...before, mobileNumber: '+15550100001' }, changes, { keepMobile: true })).toEqual({
      primaryGroup: 'retail',
    });
  });

  test('when a later patch made the old primary group a secondary one, then restoring it drops it from the secondary groups', () => {
    const changes: UserChanges = { primaryGroup: 'gone' };
    expect(reversalOf(stored(changes, { secondaryGroups: ['vip', 'retail'] }), before, changes, keepNothing)).toEqual({
      primaryGroup: 'retail',
      secondaryGroups: ['vip'],
    });
  });

  test('when a later patch made a restored secondary group the primary one, then it is not restored among the secondary groups', () => {
    const changes: UserChanges = { secondaryGroups: ['gone'] };
    expect(reversalOf(stored(changes, { primaryGroup: 'vip' }), before, changes, keepNothing)).toEqual({ secondaryGroups: [] });
  });

  test('when undoing would take the last contact of a user who had one, then the contact the patch added stays', () => {
    const changes: UserChanges = { primaryGroup: 'gone', mobileNumber: '+15550100003' };
    // A later patch removed the e-mail address, allowed because the mobile number was there.
    expect(reversalOf(stored(changes, { emailId: undefined }), before, changes, keepNothing)).toEqual({ primaryGroup: 'retail' });
  });

  test('when the user had no contact before the patch, then the contact it added goes back too', () => {
    const noContact = { ...before, emailId: undefined };
    const changes: UserChanges = { emailId: 'ada@example.com', primaryGroup: 'gone' };
    expect(reversalOf(stored(changes, {}), noContact, changes, keepNothing)).toEqual({ emailId: null, primaryGroup: 'retail' });
  });
});
