import { Router } from 'express';
import type { ActivityRepository } from '../../core/activity/activity.repository.js';
import type { DeliveriesRepository } from '../../core/deliveries/deliveries.repository.js';
import { createPasskeyChangeNotice } from '../../core/passkeys/passkey-change-notice.js';
import { NotFoundError } from '../../core/platform/errors/app-error.js';
import { removePasskey } from '../../core/passkeys/passkey-removal.js';
import type { PasskeysRepository } from '../../core/passkeys/passkeys.repository.js';
import type { UsersRepository } from '../../core/users/users.repository.js';
import { requireAdminToken } from '../middleware/admin-auth.middleware.js';
import type { ServiceContext } from '../service-context.js';
import { enterpriseQuery } from './enterprise-query.js';
import { toPasskeyResponse } from './passkey-response.js';

/**
 * A user's passkeys for the admins: listed, and removed one by one (a lost device). The user is
 * named by `?enterpriseId=` (default `default`) and userId; a removal goes to the activity record
 * with `?comments=`.
 */
export function adminPasskeysRoutes(
  ctx: ServiceContext,
  {
    users,
    passkeys,
    activity,
    deliveries,
  }: {
    users: UsersRepository;
    passkeys: PasskeysRepository;
    activity: ActivityRepository;
    deliveries: Pick<DeliveriesRepository, 'insertMany'>;
  },
): Router {
  const router = Router();
  const changeNotice = createPasskeyChangeNotice({ deliveries, enqueueDispatch: (id) => ctx.dispatch.enqueue(id), logger: ctx.logger });

  router.get('/admin/users/:userId/passkeys', requireAdminToken(ctx), async (req, res) => {
    const ref = { enterpriseId: enterpriseQuery(req), userId: String(req.params.userId) };
    if (!(await users.findUser(ref))) throw new NotFoundError('User not found');
    res.json((await passkeys.list(ref)).map(toPasskeyResponse));
  });

  router.delete('/admin/users/:userId/passkeys/:passkeyId', requireAdminToken(ctx), async (req, res) => {
    const ref = { enterpriseId: enterpriseQuery(req), userId: String(req.params.userId) };
    const comments = typeof req.query.comments === 'string' ? req.query.comments.slice(0, 1000) : undefined;
    // An unknown user has no passkey by that id: the same 404 as for an unknown passkey.
    const user = await users.findUser(ref);
    if (!user) throw new NotFoundError('Passkey not found');
    await removePasskey(
      { users, activity, logger: ctx.logger, passkeys, changeNotice },
      user,
      String(req.params.passkeyId),
      { type: 'admin' },
      comments,
    );
    res.status(204).end();
  });

  return router;
}
