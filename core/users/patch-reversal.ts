import type { User } from './user.types.js';
import type { UserChanges } from './users.repository.js';

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const stored = (user: User, field: keyof UserChanges): unknown => user[field] ?? null;

/**
 * The change that undoes a stored patch (`changes`, made on `before`) on the user as it is now.
 * A field a later patch changed again is that patch's and stays; so may the mobile number when
 * `keepMobile` (the old number went to another user meanwhile). What it writes keeps PATCH's
 * rules: the primary group is not also a secondary group, and a user who had a contact keeps one.
 */
export function reversalOf(current: User, before: User, changes: UserChanges, options: { keepMobile: boolean }): UserChanges {
  const reversal: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(changes) as [keyof UserChanges, unknown][]) {
    if (field === 'mobileNumber' && options.keepMobile) continue;
    if (sameValue(stored(current, field), value)) reversal[field] = stored(before, field);
  }
  const primary = (reversal.primaryGroup as string | undefined) ?? current.primaryGroup;
  const secondaries = (reversal.secondaryGroups as string[] | undefined) ?? current.secondaryGroups;
  if (secondaries.includes(primary)) reversal.secondaryGroups = secondaries.filter((group) => group !== primary);
  const after = (field: 'emailId' | 'mobileNumber') => (field in reversal ? reversal[field] : stored(current, field));
  const hadContact = before.emailId !== undefined || before.mobileNumber !== undefined;
  if (hadContact && after('emailId') === null && after('mobileNumber') === null) {
    for (const field of ['emailId', 'mobileNumber'] as const) if (reversal[field] === null) delete reversal[field];
  }
  return reversal as UserChanges;
}
