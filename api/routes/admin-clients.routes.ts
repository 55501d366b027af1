import { Router } from 'express';
import { listClientPage } from '../../core/clients/client-list.js';
import { resumeClientRegistration } from '../../core/clients/client-registration-resume.js';
import { rotateClientSecret } from '../../core/clients/client-secret-rotation.js';
import { toClientResponse } from '../../core/clients/client-view.js';
import type { ClientStores } from '../../core/clients/client-stores.js';
import {
  registerClient,
  removeClient,
  rotateClientCallbackSecret,
  updateClient,
  type RegisterClientInput,
  type UpdateClientInput,
} from '../../core/clients/clients.service.js';
import type { IdempotentRequests } from '../../core/idempotency/idempotent-requests.js';
import { NotFoundError } from '../../core/platform/errors/app-error.js';
import { DEFAULT_ENTERPRISE_ID } from '../../core/platform/tenancy/enterprise-id.js';
import { otpKeysFromConfig } from '../../core/crypto/otp-keys.js';
import { requireAdminToken } from '../middleware/admin-auth.middleware.js';
import { jsonBody } from '../middleware/json-body.middleware.js';
import { validateBody } from '../middleware/validate-body.middleware.js';
import type { ServiceContext } from '../service-context.js';
import { linkNextPage, parseAdminListPage } from './admin-list-page.js';
import { ADMIN_CALLER, idempotencyKeyOf, sendIdempotentAnswer } from './idempotency-key-header.js';

/** `?comments=` of a route without a body, cut to what the activity record keeps. */
const commentsQuery = (query: Record<string, unknown>) => (typeof query.comments === 'string' ? query.comments.slice(0, 1000) : undefined);

export function adminClientsRoutes(ctx: ServiceContext, stores: ClientStores, idempotent: IdempotentRequests): Router {
  const router = Router();
  const admin = requireAdminToken(ctx);

  const encryptionKey = otpKeysFromConfig(ctx.config).encryptionKey;
  /**
   * Where an Idempotency-Key of a rotation is kept: the client's enterprise, the admin caller and
   * the route (404 for an unknown client, before any claim; rotations are rare, so the extra read is cheap).
   */
  const rotationScope = async (clientId: string, route: string) => {
    const client = await stores.clients.findClient(clientId);
    if (!client) throw new NotFoundError('Client not found');
    return { enterpriseId: client.enterpriseId, callerId: ADMIN_CALLER, route };
  };

  // With an Idempotency-Key the client's id is the claim's: a retry of a request that died after
  // creating the client finishes that client (new secrets, since the first were never shown) instead of making a second.
  router.post('/admin/clients', admin, ...jsonBody(ctx), validateBody('admin-clients.create.json'), async (req, res) => {
    const { comments, ...input } = req.body as RegisterClientInput & { comments?: string };
    const scope = { enterpriseId: input.enterpriseId ?? DEFAULT_ENTERPRISE_ID, callerId: ADMIN_CALLER, route: 'POST /admin/clients' };
    const answer = await idempotent.run({ scope, key: idempotencyKeyOf(req), request: req.body }, async (claim) => {
      const resumed = claim?.resumed ? await resumeClientRegistration(stores, claim.id, { encryptionKey, comments }) : undefined;
      const { client, clientSecret, callbackSecret } =
        resumed ?? (await registerClient(stores, input, { comments, encryptionKey, clientId: claim?.id }));
      return {
        status: 201,
        location: `/admin/clients/${client.clientId}`,
        body: {
          client_id: client.clientId,
          ...(clientSecret === undefined ? {} : { client_secret: clientSecret }),
          ...(callbackSecret === undefined ? {} : { callback_secret: callbackSecret }),
        },
        secret: clientSecret !== undefined || callbackSecret !== undefined,
      };
    });
    sendIdempotentAnswer(res, answer);
  });

  // The old secret keeps working for CLIENT_SECRET_GRACE_SECONDS, so the client's deployments can switch one by one.
  // With an Idempotency-Key the rotation stores its claim id: a retry of a request that died after
  // rotating replaces the unseen secret and keeps the old one's grace, instead of rotating again.
  router.post('/admin/clients/:clientId/secret', admin, async (req, res) => {
    const clientId = String(req.params.clientId);
    const comments = commentsQuery(req.query);
    const key = idempotencyKeyOf(req);
    const scope = await rotationScope(clientId, 'POST /admin/clients/{clientId}/secret');
    const answer = await idempotent.run({ scope, key, request: { clientId, comments } }, async (claim) => {
      const grace = ctx.config.clientSecretGraceSeconds;
      const rotated = await rotateClientSecret(stores, clientId, { graceSeconds: grace, comments, claim });
      return {
        status: 200,
        body: {
          client_id: clientId,
          client_secret: rotated.clientSecret,
          previousSecretExpiresAt: rotated.previousSecretExpiresAt?.toISOString() ?? null,
        },
        secret: true,
      };
    });
    sendIdempotentAnswer(res, answer);
  });

  // The old secret stops signing at once: receivers should accept both during their own switch.
  router.post('/admin/clients/:clientId/callback-secret', admin, async (req, res) => {
    const clientId = String(req.params.clientId);
    const comments = commentsQuery(req.query);
    const key = idempotencyKeyOf(req);
    const scope = await rotationScope(clientId, 'POST /admin/clients/{clientId}/callback-secret');
    const answer = await idempotent.run({ scope, key, request: { clientId, comments } }, async () => {
      const secret = await rotateClientCallbackSecret(stores, clientId, { encryptionKey, comments });
      return { status: 200, body: { client_id: clientId, callback_secret: secret }, secret: true };
    });
    sendIdempotentAnswer(res, answer);
  });

  router.get('/admin/clients', admin, async (req, res) => {
    const page = parseAdminListPage(req);
    const { entries, next } = await listClientPage(stores.clients, page);
    linkNextPage(res, '/admin/clients', page.limit, next);
    res.json(entries.map(toClientResponse));
  });

  router.get('/admin/clients/:clientId', admin, async (req, res) => {
    const client = await stores.clients.findClient(String(req.params.clientId));
    if (!client) throw new NotFoundError('Client not found');
    res.json(toClientResponse(client));
  });

  router.patch('/admin/clients/:clientId', admin, ...jsonBody(ctx), validateBody('admin-clients.update.json'), async (req, res) => {
    const { comments, ...input } = req.body as UpdateClientInput & { comments?: string };
    res.json(toClientResponse(await updateClient(stores, String(req.params.clientId), input, comments)));
  });

  router.delete('/admin/clients/:clientId', admin, async (req, res) => {
    const clientId = String(req.params.clientId);
    await removeClient(stores, clientId, commentsQuery(req.query));
    res.status(204).end();
  });

  return router;
}
