import { getSigningKeys } from '../core/auth/signing-key.service.js';
import { createDeliveriesRepository } from '../core/deliveries/deliveries.repository.js';
import { createSentJournal } from '../core/deliveries/sent-journal.js';
import { createIdempotencyRepository } from '../core/otp/idempotency.repository.js';
import { createOtpGenerationService } from '../core/otp/otp-generation.service.js';
import { createOtpJwtSigner } from '../core/otp/otp-jwt.js';
import { otpKeysFromConfig } from '../core/crypto/otp-keys.js';
import { createRateLimits } from '../core/otp/otp-rate-limits.js';
import { createOtpCancellationService } from '../core/otp/otp-cancellation.service.js';
import { createOtpResendService } from '../core/otp/otp-resend.service.js';
import { createOtpValidationService } from '../core/otp/otp-validation.service.js';
import { createOtpsRepository } from '../core/otp/otps.repository.js';
import { findTemplateCached } from '../core/templates/template-cache.js';
import { createUsersRepository } from '../core/users/users.repository.js';
import { tokenIdentity } from './auth-server/auth-server.js';
import type { OtpRouteServices } from './routes/otp.routes.js';
import type { ServiceContext } from './service-context.js';

/** Wires the OTP services to this process's stores, keys and queues. */
export function createOtpServices(ctx: ServiceContext): OtpRouteServices {
  const keys = otpKeysFromConfig(ctx.config);
  const otps = createOtpsRepository(ctx.mongo);
  const deliveries = createDeliveriesRepository(ctx.mongo);
  const idempotency = createIdempotencyRepository(ctx.mongo);
  const validation = createOtpValidationService({
    otps,
    deliveries,
    sentJournal: createSentJournal(ctx.redis, ctx.config.queuePrefix),
    keys,
    signOtpJwt: createOtpJwtSigner(
      async () => (await getSigningKeys(ctx.mongo, ctx.config)).tokens,
      tokenIdentity(ctx.config.publicUrl).issuer,
    ),
  });
  return {
    generation: createOtpGenerationService({
      otps,
      deliveries,
      idempotency,
      users: createUsersRepository(ctx.mongo),
      templates: {
        findTemplate: async (name) => {
          const template = await findTemplateCached(ctx.mongo, name);
          if (!template) return undefined;
          return {
            channel: template.channel,
            texts: [template.text, template.subject, template.html].filter((t): t is string => t !== undefined),
          };
        },
      },
      enqueue: ctx.dispatch.enqueue,
      keys,
      logger: ctx.logger,
    }),
    validation,
    cancellation: createOtpCancellationService({ otps, deliveries, status: validation.status, logger: ctx.logger }),
    resend: createOtpResendService({ otps, deliveries, idempotency, enqueue: ctx.dispatch.enqueue, keys, logger: ctx.logger }),
    limits: createRateLimits(ctx.redis, ctx.config.queuePrefix, ctx.config.rateLimits),
  };
}
