import { Router } from 'express';
import { followRotation, type SigningKeyChanges } from '../../core/auth/signing-key-changes.js';
import type { SigningKeyRing } from '../../core/auth/signing-key-ring.js';
import { rotateSigningKeys, type RotationStores, type SigningKeyRotation } from '../../core/auth/signing-key-rotation.js';
import type { IdempotentRequests } from '../../core/idempotency/idempotent-requests.js';
import { ValidationError } from '../../core/platform/errors/app-error.js';
import { DEFAULT_ENTERPRISE_ID } from '../../core/platform/tenancy/enterprise-id.js';
import { requireAdminToken } from '../middleware/admin-auth.middleware.js';
import type { ServiceContext } from '../service-context.js';
import { ADMIN_CALLER, idempotencyKeyOf, sendIdempotentAnswer } from './idempotency-key-header.js';

/**
 * What rotating needs: the store and settings, this process's key ring, which reads the new keys
 * at once, and the notice that makes every other API process read them too.
 */
export interface SigningKeyRotationStores extends RotationStores {
  ring: Pick<SigningKeyRing, 'reload'>;
  changes: Pick<SigningKeyChanges, 'announce'>;
}

/** The rotation as the admin API and the CLI show it. */
export const toRotationResponse = (rotation: SigningKeyRotation) => ({
  rotated: rotation.rotated.map((key) => ({
    alg: key.alg,
    kid: key.kid,
    previousKid: key.previousKid,
    activeFrom: key.activeFrom.toISOString(),
    previousKeyRemovedAt: key.previousKeyRemovedAt.toISOString(),
  })),
  idTokenKeyConfigured: rotation.idTokenKeyConfigured,
});

/**
 * Rotating the token signing keys (admin API, docs/authorization-server.md#rotating-the-signing-keys):
 * `?retireAtOnce=true` ends the replaced keys now (a key that may have leaked), `?comments=` goes
 * to the activity record.
 */
export function adminSigningKeysRoutes(ctx: ServiceContext, stores: SigningKeyRotationStores, idempotent: IdempotentRequests): Router {
  const router = Router();

  router.post('/admin/signing-keys/rotation', requireAdminToken(ctx), async (req, res) => {
    const retire = req.query.retireAtOnce;
    if (retire !== undefined && retire !== 'true' && retire !== 'false')
      throw new ValidationError('[Invalid field retireAtOnce]', { error: 'Invalid data.' });
    const comments = typeof req.query.comments === 'string' ? req.query.comments.slice(0, 1000) : undefined;
    const retireAtOnce = retire === 'true';
    // With an Idempotency-Key a retry after a timeout gets the first rotation's answer again
    // instead of rotating a second time; the rotation stores the claim id, so also after a crash.
    // The keys are the deployment's: the key is kept with the default enterprise's.
    const scope = { enterpriseId: DEFAULT_ENTERPRISE_ID, callerId: ADMIN_CALLER, route: 'POST /admin/signing-keys/rotation' };
    const answer = await idempotent.run({ scope, key: idempotencyKeyOf(req), request: { retireAtOnce, comments } }, async (claim) => {
      const rotation = await rotateSigningKeys(stores, { retireAtOnce, comments, claim });
      await followRotation(stores.ring, stores.changes, ctx.logger);
      return { status: 200, body: toRotationResponse(rotation) };
    });
    sendIdempotentAnswer(res, answer);
  });

  return router;
}
