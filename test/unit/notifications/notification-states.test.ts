import {
  countedWrongNumberFilter,
  effectiveStatus,
  lastWrongNumberFilter,
  refusalOf,
  transitionFilter,
} from '../../../core/notifications/notification-states.js';
import { FINAL_STATUSES } from '../../../core/notifications/notification.types.js';

const now = new Date('2026-11-21T10:00:00Z');
const before = new Date(now.getTime() - 1);
const after = new Date(now.getTime() + 1);

describe('which final state wins', () => {
  test('when a final state other than EXPIRED is written, then it needs ACTIVE and expiresAt still ahead', () => {
    for (const to of FINAL_STATUSES.filter((s) => s !== 'EXPIRED'))
      expect(transitionFilter(to, now)).toEqual({ status: 'ACTIVE', expiresAt: { $gt: now } });
  });

  test('when EXPIRED is written, then it needs ACTIVE and expiresAt reached: the two sets never overlap', () => {
    expect(transitionFilter('EXPIRED', now)).toEqual({ status: 'ACTIVE', expiresAt: { $lte: now } });
  });

  test('when wrong numbers are counted, then the first two keep it ACTIVE and the third ends it', () => {
    expect(countedWrongNumberFilter(now)).toEqual({ status: 'ACTIVE', expiresAt: { $gt: now }, numberAttempts: { $lt: 2 } });
    expect(lastWrongNumberFilter(now)).toEqual({ status: 'ACTIVE', expiresAt: { $gt: now }, numberAttempts: 2 });
  });

  test('when an ACTIVE record is past expiresAt, then readers see EXPIRED', () => {
    expect(effectiveStatus({ status: 'ACTIVE', expiresAt: now }, now)).toBe('EXPIRED');
    expect(effectiveStatus({ status: 'ACTIVE', expiresAt: after }, now)).toBe('ACTIVE');
    expect(effectiveStatus({ status: 'UPDATED', expiresAt: before }, now)).toBe('UPDATED');
  });

  test('when a write was refused, then the reason follows from the record read afterwards', () => {
    expect(refusalOf(null, now)).toEqual({ kind: 'not-found' });
    expect(refusalOf({ status: 'ACTIVE', expiresAt: before }, now)).toEqual({ kind: 'expired' });
    expect(refusalOf({ status: 'EXPIRED', expiresAt: before }, now)).toEqual({ kind: 'expired' });
    expect(refusalOf({ status: 'CANCELLED', expiresAt: after }, now)).toEqual({ kind: 'ended', status: 'CANCELLED' });
  });

  test('when the record was answered, then the refusal names the stored answer; no other end carries one', () => {
    expect(refusalOf({ status: 'UPDATED', expiresAt: before, action: 'accept', isDsVerified: true }, now)).toEqual({
      kind: 'ended',
      status: 'UPDATED',
      answer: { action: 'accept', isDsVerified: true },
    });
    expect(refusalOf({ status: 'TAMPERED', expiresAt: after, isDsVerified: false }, now)).toEqual({ kind: 'ended', status: 'TAMPERED' });
    expect(refusalOf({ status: 'DISMISSED', expiresAt: after, isDsVerified: false }, now)).toEqual({ kind: 'ended', status: 'DISMISSED' });
  });
});
