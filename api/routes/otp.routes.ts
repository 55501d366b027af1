import { Router, type RequestHandler } from 'express';
import { NotFoundError } from '../../core/platform/errors/app-error.js';
import type { OtpCancellationService } from '../../core/otp/otp-cancellation.service.js';
import type { OtpGenerationService } from '../../core/otp/otp-generation.service.js';
import { parseGenerateOtpRequest } from '../../core/otp/otp-request.validator.js';
import type { OtpValidationService } from '../../core/otp/otp-validation.service.js';
import type { EnterpriseApiLimits } from '../../core/platform/throttling/enterprise-api-limits.js';
import { rateLimitHeaders } from '../errors/rate-limit-headers.js';
import { idempotencyKeyOf } from './idempotency-key-header.js';
import { validationAnswer } from './otp-validation-answer.js';
import type { OtpResendService } from '../../core/otp/otp-resend.service.js';
import { authOf, requireBearer, type BearerStores } from '../middleware/bearer-auth.middleware.js';
import { requireAllowedIp } from '../middleware/ip-allow-list.middleware.js';
import { jsonBody } from '../middleware/json-body.middleware.js';
import { validateBody } from '../middleware/validate-body.middleware.js';
import type { ServiceContext } from '../service-context.js';
import { admittedStates, refundable, takePersonBudgets, type PersonBudgets } from './request-budgets.js';
import { dispatchPriority } from '../../core/platform/queues/dispatch-fairness.js';

export interface OtpRouteServices {
  generation: OtpGenerationService;
  validation: OtpValidationService;
  cancellation: OtpCancellationService;
  resend: OtpResendService;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
function otpUuidParam(value: string): string {
  if (!UUID_RE.test(value)) throw new NotFoundError('OTP not found');
  return value.toLowerCase();
}

/**
 * Generate, validate and inspect OTPs. Order of checks: token, the client's IP allow-list, then
 * the request. Users are those of the client's enterprise only.
 */
export function otpRoutes(ctx: ServiceContext, bearer: BearerStores, services: OtpRouteServices, limits: EnterpriseApiLimits): Router {
  const router = Router();
  const auth = [requireBearer(ctx, bearer, 'otp'), requireAllowedIp(bearer.clients)];

  // The request's deadline counts from its arrival, before authentication and body parsing.
  const stampArrival: RequestHandler = (_req, res, next) => {
    res.locals.receivedAt = Date.now();
    next();
  };

  // Up to 100 dynamic macros of 1000 characters each (the schema): more than the small limit.
  router.post('/v1/svc-otp', stampArrival, ...auth, ...jsonBody(ctx, { limit: '256kb' }), async (req, res) => {
    const { clientId, enterpriseId, test, testCodes } = authOf(res);
    const receivedAt = res.locals.receivedAt as number;
    const request = parseGenerateOtpRequest(req.body);
    const idempotencyKey = idempotencyKeyOf(req);
    // A finished request answered again uses no limit and does no work.
    const replayed = await services.generation.replayOf({ clientId, enterpriseId, rawBody: req.body, idempotencyKey });
    if (replayed !== undefined) {
      res.status(200).set('Idempotent-Replayed', 'true').json({ otpUuid: replayed });
      return;
    }
    const { admission, refund, enterpriseSent } = takePersonBudgets(limits, 'otp', {
      clientId,
      enterpriseId,
      userId: request.userId,
      test,
    });
    const fairShare = ctx.config.dispatchFairShare;
    const priority = enterpriseSent.then((sent) => (sent === undefined ? undefined : dispatchPriority(sent, fairShare)));
    // Points go back when the request is refused for the caller's own mistake (4xx but 429) or
    // turns out to be a replay: neither sends anything to the person.
    let result: { otpUuid: string; replayed?: true };
    try {
      result = await services.generation.generate({
        clientId,
        enterpriseId,
        test,
        fixedCode: testCodes.get(request.userId),
        request,
        rawBody: req.body,
        idempotencyKey,
        admission,
        dispatchPriority: priority,
        deadline: receivedAt + ctx.config.requestDeadlineMs,
      });
    } catch (err) {
      if (refundable(err)) await refund();
      // Refused after its budgets were taken (an unknown user or template, no address): the
      // headers as on a 200, so a caller throttling itself from them keeps them on refusals.
      res.set(rateLimitHeaders(await admittedStates({ admission })));
      throw err;
    }
    if (result.replayed) {
      await refund();
      res.status(200).set('Idempotent-Replayed', 'true').json({ otpUuid: result.otpUuid });
      return;
    }
    res
      .status(200)
      .set(rateLimitHeaders(await admission))
      .json(result);
  });

  router.post('/v1/svc-otp/:otpUuid/validate', ...auth, ...jsonBody(ctx), validateBody('otp.validate.json'), async (req, res) => {
    const { clientId } = authOf(res);
    const budget = await limits.consume('validatePerClient', clientId);
    res.set(rateLimitHeaders([budget]));
    const body = req.body as { otp: string };
    res
      .status(200)
      .json(validationAnswer(await services.validation.validate(otpUuidParam(String(req.params.otpUuid)), clientId, body.otp)));
  });

  router.get('/v1/svc-otp/:otpUuid', ...auth, async (req, res) => {
    const { clientId } = authOf(res);
    res.status(200).json(await services.validation.status(otpUuidParam(String(req.params.otpUuid)), clientId));
  });

  // Answers the state, as GET does; cancelling again answers it again (a retry is safe).
  router.delete('/v1/svc-otp/:otpUuid', ...auth, async (req, res) => {
    const { clientId } = authOf(res);
    res.status(200).json(await services.cancellation.cancel(otpUuidParam(String(req.params.otpUuid)), clientId));
  });

  // No body: the same code goes again to the same addresses with the same templates.
  router.post('/v1/svc-otp/:otpUuid/resend', ...auth, async (req, res) => {
    const { clientId, enterpriseId, test } = authOf(res);
    const otpUuid = otpUuidParam(String(req.params.otpUuid));
    const idempotencyKey = idempotencyKeyOf(req);
    let budgets: PersonBudgets | undefined;
    const admit = (userId: string) => {
      budgets = takePersonBudgets(limits, 'otp', { clientId, enterpriseId, userId, test });
      return budgets.admission;
    };
    let result: Awaited<ReturnType<OtpResendService['resend']>>;
    try {
      const fairShare = ctx.config.dispatchFairShare;
      const priority = async () => {
        const sent = await budgets?.enterpriseSent;
        return sent === undefined ? undefined : dispatchPriority(sent, fairShare);
      };
      result = await services.resend.resend({ otpUuid, clientId, enterpriseId, idempotencyKey, admit, dispatchPriority: priority });
    } catch (err) {
      if (budgets && refundable(err)) await budgets.refund();
      // Refused after its budgets were taken (the OTP ended meanwhile): the headers as on a 200.
      if (budgets) res.set(rateLimitHeaders(await admittedStates(budgets)));
      throw err;
    }
    if (result.replayed) {
      // A duplicate that lost the race to its twin took limits for nothing: they go back.
      await budgets?.refund();
      res.set('Idempotent-Replayed', 'true');
    } else res.set(rateLimitHeaders(result.limits));
    res.status(200).json(await services.validation.status(otpUuid, clientId));
  });

  return router;
}
