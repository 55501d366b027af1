import { DEFAULT_ENTERPRISE_ID } from '../platform/tenancy/enterprise-id.js';
import type { StillWantedCheck } from '../deliveries/delivery-replay.types.js';
import { PENDING_STATUSES } from './user.types.js';
import type { UsersRepository } from './users.repository.js';

/** The code issue an activation delivery id carries (`activation-...-<issue>-<channel>`). */
const issueOf = (deliveryId: string): number | undefined => {
  const match = /-([0-9]{1,9})-(SMS|EMAIL)$/.exec(deliveryId);
  return match ? Number(match[1]) : undefined;
};

/**
 * An activation message is worth sending again only while its code can still activate: the user
 * is pending, not blocked, and this issue of the code is the current one and unexpired.
 */
export function activationStillWanted(users: Pick<UsersRepository, 'findUser'>): StillWantedCheck {
  return async (delivery, now) => {
    const user = await users.findUser({ enterpriseId: delivery.enterpriseId ?? DEFAULT_ENTERPRISE_ID, userId: delivery.refId });
    if (!user || user.status === 'DELETED') return { code: 'ended', reason: 'Its user was deleted.' };
    if (!PENDING_STATUSES.includes(user.status)) return { code: 'ended', reason: 'Its user has activated already.' };
    if (user.blocked) return { code: 'ended', reason: 'Its user is blocked.' };
    const activation = user.activation;
    if (!activation || activation.issue !== issueOf(delivery.id)) return { code: 'ended', reason: 'A newer activation code replaced it.' };
    if (activation.expiresAt.getTime() <= now.getTime())
      return { code: 'expired', reason: `Its activation code expired at ${activation.expiresAt.toISOString()}.` };
    return undefined;
  };
}
