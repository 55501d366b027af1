import { Router, type Request, type RequestHandler } from 'express';
import type { IdempotentRequests } from '../../core/idempotency/idempotent-requests.js';
import { USER_ID_RE } from '../../core/users/user-id.js';
import { DEFAULT_ENTERPRISE_ID, type UserRef } from '../../core/platform/tenancy/enterprise-id.js';
import { NotFoundError, ValidationError } from '../../core/platform/errors/app-error.js';
import type { ActivationThrottle } from '../../core/users/activation-throttle.js';
import { rateLimitHeaders } from '../errors/rate-limit-headers.js';
import type { ActivateCommand, ActivationService } from '../../core/users/activation.service.js';
import { parseEnrollmentRequest, sendsActivationCode } from '../../core/users/enrollment-request.validator.js';
import { reportingSmsCountryRefusals } from '../../core/users/mobile-number-country.js';
import type { EnterpriseApiLimits } from '../../core/platform/throttling/enterprise-api-limits.js';
import { refundable, takeEnrollmentBudgets } from './request-budgets.js';
import { dispatchPriority } from '../../core/platform/queues/dispatch-fairness.js';
import type { EnrollmentService } from '../../core/users/enrollment.service.js';
import type { UserLifecycle } from '../../core/users/user-lifecycle.service.js';
import type { UsersRepository } from '../../core/users/users.repository.js';
import { encodeUserCursor } from '../../core/users/user-list-cursor.js';
import { parseUserListQuery } from '../../core/users/user-list-query.js';
import { parseUserUpdateRequest } from '../../core/users/user-update-request.validator.js';
import type { UserUpdateService } from '../../core/users/user-update.service.js';
import type { User } from '../../core/users/user.types.js';
import { requireAdminToken } from '../middleware/admin-auth.middleware.js';
import { authOf, requireBearer, type BearerStores } from '../middleware/bearer-auth.middleware.js';
import { invalidFieldError, validateBody } from '../middleware/validate-body.middleware.js';
import { requireAllowedIp } from '../middleware/ip-allow-list.middleware.js';
import { jsonBody } from '../middleware/json-body.middleware.js';
import type { ServiceContext } from '../service-context.js';
import { enterpriseQuery } from './enterprise-query.js';
import { toUserResponse } from './user-response.js';
import { ADMIN_CALLER, idempotencyKeyOf, sendIdempotentAnswer } from './idempotency-key-header.js';

export interface UsersRouteServices {
  users: Pick<UsersRepository, 'findUser' | 'listPage'>;
  update: UserUpdateService;
  throttle: Pick<ActivationThrottle, 'consumeIp' | 'attemptsLeft'>;
  enrollment: EnrollmentService;
  activation: ActivationService;
  /** Deleting a user and what that ends. */
  lifecycle: Pick<UserLifecycle, 'remove'>;
  /** Idempotency-Key of the activation re-issue. */
  idempotent: IdempotentRequests;
}

function userIdParam(value: string): string {
  if (!USER_ID_RE.test(value)) throw new NotFoundError('User not found');
  return value;
}

/** Optional `comments` query parameter of a DELETE, kept in the activity record. */
function commentsQuery(req: Request): string | undefined {
  const value = req.query.comments;
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length > 1000) throw new ValidationError('[Invalid field comments]', { error: 'Invalid data.' });
  return value;
}

/** The address the allow-lists see: the socket address, or the hop TRUST_PROXY names. */
function callerAddress(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

/**
 * Add user, read, delete, public activation, and the admin re-issue. A client reaches only the
 * users of its own enterprise: every look-up goes by (enterpriseId, userId).
 */
export function usersRoutes(ctx: ServiceContext, bearer: BearerStores, services: UsersRouteServices, limits: EnterpriseApiLimits): Router {
  const router = Router();
  const guard = [requireBearer(ctx, bearer, 'users'), requireAllowedIp(bearer.clients)];
  const refOf = (enterpriseId: string, userId: string): UserRef => ({ enterpriseId, userId: userIdParam(userId) });
  router.post('/v1/users', ...guard, ...jsonBody(ctx, { limit: 'large' }), async (req, res) => {
    const { clientId, enterpriseId, test } = authOf(res);
    const request = reportingSmsCountryRefusals(
      () => parseEnrollmentRequest(req.body as Record<string, unknown>, ctx.config.smsAllowedCountries),
      { clientId, enterpriseId },
      ctx.logger,
    );
    // An enrollment that sends a code takes a point of the client's and the enterprise's budgets
    // (no one sends SMS to numbers of their choice without end); one refused for the caller's own
    // mistake (409: the user exists, a group is missing) gives them back.
    const budgets = sendsActivationCode(request) ? takeEnrollmentBudgets(limits, { clientId, enterpriseId }, test) : undefined;
    let userId: string;
    try {
      let priority: number | undefined;
      if (budgets) {
        res.set(rateLimitHeaders(await budgets.admission));
        // The activation messages' dispatch priority, from what the enterprise's budget counted in
        // its window (this one included), as for OTPs: a bulk enrollment beyond the fair share
        // queues behind other enterprises' codes instead of holding them back.
        const sent = await budgets.enterpriseSent;
        if (sent !== undefined) priority = dispatchPriority(sent, ctx.config.dispatchFairShare);
      }
      ({ userId } = await services.enrollment.enroll({ clientId, enterpriseId }, request, priority));
    } catch (err) {
      if (budgets && refundable(err)) await budgets.refund();
      throw err;
    }
    res.status(201).location(`/v1/users/${userId}`).end();
  });

  // Public: the per-address limit comes first, so a caller over it costs one Redis call and never
  // has a body read or parsed.
  const activationPerIp: RequestHandler = async (req, res, next) => {
    res.set(rateLimitHeaders([await services.throttle.consumeIp(callerAddress(req))]));
    next();
  };
  router.post(
    '/v1/users/activate',
    activationPerIp,
    ...jsonBody(ctx),
    validateBody('users.activate.json', { toError: invalidFieldError({ error: 'Invalid data.' }) }),
    async (req, res) => {
      const body = req.body as Omit<ActivateCommand, 'enterpriseId' | 'ip'> & { enterpriseId?: string };
      const enterpriseId = body.enterpriseId ?? DEFAULT_ENTERPRISE_ID;
      res.status(200).json(await services.activation.activate({ ...body, enterpriseId, ip: callerAddress(req) }));
    },
  );

  // As GET /v1/users/{userId} shows a user: a pending activation with its attempts left.
  const shown = async (user: User) =>
    toUserResponse(
      user,
      user.activation ? await services.throttle.attemptsLeft({ enterpriseId: user.enterpriseId, userId: user.userId }) : 0,
    );

  // Only the caller's enterprise is ever read: the cursor names a position, never an enterprise.
  router.get('/v1/users', ...guard, async (req, res) => {
    const { enterpriseId } = authOf(res);
    const query = parseUserListQuery(req.query as Record<string, unknown>);
    const page = await services.users.listPage({ enterpriseId, ...query });
    const last = page.users.at(-1);
    res.status(200).json({
      users: await Promise.all(page.users.map(shown)),
      ...(page.more && last ? { next: encodeUserCursor({ createdAt: last.createdAt, userId: last.userId }) } : {}),
    });
  });

  router.get('/v1/users/:userId', ...guard, async (req, res) => {
    const ref = refOf(authOf(res).enterpriseId, String(req.params.userId));
    const user = await services.users.findUser(ref);
    if (!user) throw new NotFoundError('User not found');
    res.status(200).json(await shown(user));
  });

  router.patch('/v1/users/:userId', ...guard, ...jsonBody(ctx), async (req, res) => {
    const { clientId, enterpriseId } = authOf(res);
    const ref = refOf(enterpriseId, String(req.params.userId));
    const request = reportingSmsCountryRefusals(
      () => parseUserUpdateRequest(req.body as Record<string, unknown>, ctx.config.smsAllowedCountries),
      { clientId, enterpriseId },
      ctx.logger,
    );
    res.status(200).json(await shown(await services.update.update({ clientId }, ref, request)));
  });

  router.delete('/v1/users/:userId', ...guard, async (req, res) => {
    const { clientId, enterpriseId } = authOf(res);
    const ref = refOf(enterpriseId, String(req.params.userId));
    await services.lifecycle.remove({ clientId }, ref, commentsQuery(req));
    res.status(204).end();
  });

  // A retry with the same Idempotency-Key gets the first answer again: no second code is sent. The
  // code is stored with the claim id, so a retry of a request that died after storing it answers that code.
  router.post('/admin/users/:userId/activation', requireAdminToken(ctx), async (req, res) => {
    const ref = refOf(enterpriseQuery(req), String(req.params.userId));
    const comments = commentsQuery(req);
    const scope = { enterpriseId: ref.enterpriseId, callerId: ADMIN_CALLER, route: 'POST /admin/users/{userId}/activation' };
    const answer = await services.idempotent.run(
      { scope, key: idempotencyKeyOf(req), request: { userId: ref.userId, comments } },
      async (claim) => ({ status: 202, body: await services.activation.reissue(ref, comments, claim) }),
    );
    sendIdempotentAnswer(res, answer);
  });

  return router;
}
