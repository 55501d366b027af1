import { Router, type RequestHandler } from 'express';
import { lookupClient } from '../../core/clients/client-lookup.cache.js';
import { AppError, NotFoundError } from '../../core/errors/app-error.js';
import { enterpriseOfClient } from '../../core/notifications/enterprise-scope.js';
import type { ActivationLimits } from '../../core/users/activation-rate-limits.js';
import type { ActivateCommand, ActivationService } from '../../core/users/activation.service.js';
import { parseEnrollmentRequest } from '../../core/users/enrollment-request.validator.js';
import type { EnrollmentService } from '../../core/users/enrollment.service.js';
import { MAX_ACTIVATION_ATTEMPTS, type User } from '../../core/users/user.types.js';
import type { UsersRepository } from '../../core/users/users.repository.js';
import { requireAdminToken } from '../middleware/admin-auth.middleware.js';
import { authOf, requireBearer } from '../middleware/bearer-auth.middleware.js';
import { invalidFieldError, validateBody } from '../middleware/validate-body.middleware.js';
import { requireAllowedIp } from '../middleware/ip-allow-list.middleware.js';
import { jsonBody } from '../middleware/json-body.middleware.js';
import type { ServiceContext } from '../service-context.js';

export interface UsersRouteServices {
  users: Pick<UsersRepository, 'findByUserId' | 'markDeleted'>;
  limits: Pick<ActivationLimits, 'consumeIp' | 'consumeUser'>;
  enrollment: EnrollmentService;
  activation: ActivationService;
  /** Ends the user's pending notifications as DISCARD (deleting a user). */
  discardPendingNotifications: (enterpriseId: string, userId: string) => Promise<number>;
}

const USER_ID_RE = /^[A-Za-z0-9._@-]{1,64}$/;

function userIdParam(value: string): string {
  if (!USER_ID_RE.test(value)) throw new NotFoundError('User not found');
  return value;
}

/** D3: 405 comes after authentication and the allow-list, before anything about the body. */
const methodNotAllowed =
  (allow: string): RequestHandler =>
  (req) => {
    throw new AppError('METHOD_NOT_ALLOWED', 405, `Request method '${req.method}' is not supported`, { headers: { Allow: allow } });
  };

/** The user without secrets: no code, digest, verification key or client of record. */
function toUserResponse(user: User): Record<string, unknown> {
  const { activation, device } = user;
  return {
    userId: user.userId,
    loginId: user.loginId,
    primaryGroup: user.primaryGroup,
    secondaryGroups: user.secondaryGroups.join(','),
    firstName: user.firstName,
    lastName: user.lastName,
    ...(user.emailId !== undefined ? { emailId: user.emailId } : {}),
    ...(user.mobileNumber !== undefined ? { mobileNumber: user.mobileNumber } : {}),
    status: user.status,
    sourceType: user.sourceType,
    ...(user.comments !== undefined ? { comments: user.comments } : {}),
    ...(activation
      ? {
          activation: {
            expiresAt: activation.expiresAt.toISOString(),
            attemptsLeft: Math.max(MAX_ACTIVATION_ATTEMPTS - activation.failedAttempts, 0),
            locked: activation.failedAttempts >= MAX_ACTIVATION_ATTEMPTS,
          },
        }
      : {}),
    ...(device ? { device: { deviceId: device.deviceId, publicKeyJwk: device.publicKeyJwk, registeredAt: device.registeredAt.toISOString() } } : {}),
    ...(user.server_bio_template_hash !== undefined
      ? {
          server_bio_template_hash: user.server_bio_template_hash,
          server_bio_template_hash_created_ts: user.server_bio_template_hash_created_ts?.toISOString(),
          server_bio_template_source: user.server_bio_template_source,
        }
      : {}),
    ...(user.activatedAt ? { activatedAt: user.activatedAt.toISOString() } : {}),
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
  };
}

/** Add user, read, delete (spec 4.3, D16-D22), public activation, and the admin re-issue. */
export function usersRoutes(ctx: ServiceContext, services: UsersRouteServices): Router {
  const router = Router();
  const guard = [requireBearer(ctx, 'users'), requireAllowedIp(ctx)];

  router.post('/v1/users', ...guard, ...jsonBody(ctx), async (req, res) => {
    const request = parseEnrollmentRequest(req.body as Record<string, unknown>);
    const { location } = await services.enrollment.enroll(authOf(res).clientId, request);
    res.status(201).location(location).end();
  });
  router.all('/v1/users', ...guard, methodNotAllowed('POST'));

  router.post(
    '/v1/users/activate',
    ...jsonBody(ctx),
    validateBody('users.activate.json', { toError: invalidFieldError({ error: 'Invalid data.' }) }),
    async (req, res) => {
      const command = req.body as ActivateCommand;
      await services.limits.consumeIp(req.ip ?? req.socket.remoteAddress ?? 'unknown');
      await services.limits.consumeUser(command.userId);
      res.status(200).json(await services.activation.activate(command));
    },
  );

  router.get('/v1/users/:userId', ...guard, async (req, res) => {
    const user = await services.users.findByUserId(userIdParam(String(req.params.userId)));
    if (!user) throw new NotFoundError('User not found');
    res.status(200).json(toUserResponse(user));
  });

  router.delete('/v1/users/:userId', ...guard, async (req, res) => {
    const userId = userIdParam(String(req.params.userId));
    if (!(await services.users.markDeleted(userId, new Date()))) throw new NotFoundError('User not found');
    // After the status change, so no notification can be created in between; deleting again
    // (the user is then already DELETED) finishes a discard a crash interrupted.
    const client = await lookupClient(ctx.mongo, authOf(res).clientId);
    await services.discardPendingNotifications(enterpriseOfClient(client ?? { clientId: authOf(res).clientId }), userId);
    res.status(204).end();
  });
  router.all('/v1/users/:userId', ...guard, methodNotAllowed('GET, DELETE'));

  router.post('/admin/users/:userId/activation', requireAdminToken(ctx), async (req, res) => {
    res.status(202).json(await services.activation.reissue(userIdParam(String(req.params.userId))));
  });

  return router;
}
