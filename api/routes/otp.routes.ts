import { Router, type RequestHandler } from 'express';
import { userKey } from '../../core/enterprises/enterprise-id.js';
import { AppError, NotFoundError, ValidationError } from '../../core/errors/app-error.js';
import type { OtpGenerationService } from '../../core/otp/otp-generation.service.js';
import { parseGenerateOtpRequest } from '../../core/otp/otp-request.validator.js';
import type { OtpValidationService } from '../../core/otp/otp-validation.service.js';
import { rateLimitHeaders, type LimitState, type RateLimits } from '../../core/otp/otp-rate-limits.js';
import { authOf, requireBearer } from '../middleware/bearer-auth.middleware.js';
import { requireAllowedIp } from '../middleware/ip-allow-list.middleware.js';
import { jsonBody } from '../middleware/json-body.middleware.js';
import { validateBody } from '../middleware/validate-body.middleware.js';
import type { ServiceContext } from '../service-context.js';

export interface OtpRouteServices {
  generation: OtpGenerationService;
  validation: OtpValidationService;
  limits: RateLimits;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const IDEMPOTENCY_KEY_RE = /^[\x21-\x7e]{1,255}$/;

function otpUuidParam(value: string): string {
  if (!UUID_RE.test(value)) throw new NotFoundError('OTP not found');
  return value.toLowerCase();
}

/**
 * Generate, validate and inspect OTPs. Order of checks: token, the client's IP allow-list, then
 * the request. Users are those of the client's enterprise only.
 */
export function otpRoutes(ctx: ServiceContext, services: OtpRouteServices): Router {
  const router = Router();
  const auth = [requireBearer(ctx, 'otp'), requireAllowedIp(ctx)];

  // The request's deadline counts from its arrival, before authentication and body parsing.
  const stampArrival: RequestHandler = (_req, res, next) => {
    res.locals.receivedAt = Date.now();
    next();
  };

  // Up to 100 dynamic macros of 1000 characters each (the schema): more than the small limit.
  router.post('/v1/svc-otp', stampArrival, ...auth, ...jsonBody(ctx, { limit: '256kb' }), async (req, res) => {
    const { clientId, enterpriseId } = authOf(res);
    const receivedAt = res.locals.receivedAt as number;
    const request = parseGenerateOtpRequest(req.body);
    const idempotencyKey = req.get('idempotency-key');
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY_RE.test(idempotencyKey)) {
      throw new ValidationError('Idempotency-Key must be 1 to 255 visible ASCII characters');
    }
    // A finished request answered again uses no limit and does no work.
    const replayed = await services.generation.replayOf({ clientId, enterpriseId, rawBody: req.body, idempotencyKey });
    if (replayed !== undefined) {
      res.status(200).set('Idempotent-Replayed', 'true').json({ otpUuid: replayed });
      return;
    }
    // Per user across the enterprise's clients: several backends together cannot flood one person
    // with messages, and one enterprise never uses up another's budget for a userId they share.
    const budgets = [
      { name: 'otpPerClient', key: clientId },
      { name: 'otpPerUser', key: userKey({ enterpriseId, userId: request.userId }) },
    ] as const;
    const taken = Promise.allSettled(budgets.map((b) => services.limits.consume(b.name, b.key)));
    const admission = taken.then((outcomes) => {
      for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason;
      return outcomes.map((outcome) => (outcome as PromiseFulfilledResult<LimitState>).value);
    });
    // Points go back when the request is refused for the caller's own mistake (4xx but 429) or
    // turns out to be a replay: neither sends anything to the person.
    const refund = async () => {
      const outcomes = await taken;
      await Promise.all(budgets.map((b, i) => (outcomes[i]?.status === 'fulfilled' ? services.limits.refund(b.name, b.key) : undefined)));
    };
    let result: { otpUuid: string; replayed?: true };
    try {
      result = await services.generation.generate({
        clientId,
        enterpriseId,
        request,
        rawBody: req.body,
        idempotencyKey,
        admission,
        deadline: receivedAt + ctx.config.requestDeadlineMs,
      });
    } catch (err) {
      if (err instanceof AppError && err.status >= 400 && err.status < 500 && err.status !== 429) await refund();
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
    const budget = await services.limits.consume('validatePerClient', clientId);
    res.set(rateLimitHeaders([budget]));
    const body = req.body as { otp: string };
    res.status(200).json(await services.validation.validate(otpUuidParam(String(req.params.otpUuid)), clientId, body.otp));
  });

  router.get('/v1/svc-otp/:otpUuid', ...auth, async (req, res) => {
    const { clientId } = authOf(res);
    res.status(200).json(await services.validation.status(otpUuidParam(String(req.params.otpUuid)), clientId));
  });

  return router;
}
