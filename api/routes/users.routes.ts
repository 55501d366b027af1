import { Router, type RequestHandler } from 'express';
import { AppError, NotFoundError } from '../../core/errors/app-error.js';
import type { ActivationLimits } from '../../core/users/activation-rate-limits.js';
import type { ActivateCommand, ActivationService } from '../../core/users/activation.service.js';
import { parseEnrollmentRequest } from '../../core/users/enrollment-request.validator.js';
import type { EnrollmentService } from '../../core/users/enrollment.service.js';
import type { UsersRepository } from '../../core/users/users.repository.js';
import { requireAdminToken } from '../middleware/admin-auth.middleware.js';
import { authOf, requireBearer } from '../middleware/bearer-auth.middleware.js';
import { invalidFieldError, validateBody } from '../middleware/validate-body.middleware.js';
import { requireAllowedIp } from '../middleware/ip-allow-list.middleware.js';
import { jsonBody } from '../middleware/json-body.middleware.js';
import type { ServiceContext } from '../service-context.js';
import { toUserResponse } from './user-response.js';

export interface UsersRouteServices {
  users: Pick<UsersRepository, 'findByUserId' | 'markDeleted'>;
  limits: Pick<ActivationLimits, 'consumeIp' | 'consumeUser'>;
  enrollment: EnrollmentService;
  activation: ActivationService;
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
    if (!(await services.users.markDeleted(userIdParam(String(req.params.userId)), new Date()))) throw new NotFoundError('User not found');
    res.status(204).end();
  });
  router.all('/v1/users/:userId', ...guard, methodNotAllowed('GET, DELETE'));

  router.post('/admin/users/:userId/activation', requireAdminToken(ctx), async (req, res) => {
    res.status(202).json(await services.activation.reissue(userIdParam(String(req.params.userId))));
  });

  return router;
}
