import { Router } from 'express';
import { listClientPage } from '../../core/clients/client-list.js';
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
import { NotFoundError } from '../../core/platform/errors/app-error.js';
import { otpKeysFromConfig } from '../../core/crypto/otp-keys.js';
import { requireAdminToken } from '../middleware/admin-auth.middleware.js';
import { jsonBody } from '../middleware/json-body.middleware.js';
import { validateBody } from '../middleware/validate-body.middleware.js';
import type { ServiceContext } from '../service-context.js';
import { linkNextPage, parseAdminListPage } from './admin-list-page.js';

/** `?comments=` of a route without a body, cut to what the activity record keeps. */
const commentsQuery = (query: Record<string, unknown>) => (typeof query.comments === 'string' ? query.comments.slice(0, 1000) : undefined);

export function adminClientsRoutes(ctx: ServiceContext, stores: ClientStores): Router {
  const router = Router();
  const admin = requireAdminToken(ctx);

  router.post('/admin/clients', admin, ...jsonBody(ctx), validateBody('admin-clients.create.json'), async (req, res) => {
    const { comments, ...input } = req.body as RegisterClientInput & { comments?: string };
    const { client, clientSecret, callbackSecret } = await registerClient(stores, input, {
      comments,
      encryptionKey: otpKeysFromConfig(ctx.config).encryptionKey,
    });
    res
      .status(201)
      .location(`/admin/clients/${client.clientId}`)
      .json({
        client_id: client.clientId,
        ...(clientSecret === undefined ? {} : { client_secret: clientSecret }),
        ...(callbackSecret === undefined ? {} : { callback_secret: callbackSecret }),
      });
  });

  // The old secret keeps working for CLIENT_SECRET_GRACE_SECONDS, so the client's deployments can switch one by one.
  router.post('/admin/clients/:clientId/secret', admin, async (req, res) => {
    const clientId = String(req.params.clientId);
    const rotated = await rotateClientSecret(stores, clientId, {
      graceSeconds: ctx.config.clientSecretGraceSeconds,
      comments: commentsQuery(req.query),
    });
    res.status(200).json({
      client_id: clientId,
      client_secret: rotated.clientSecret,
      previousSecretExpiresAt: rotated.previousSecretExpiresAt?.toISOString() ?? null,
    });
  });

  // The old secret stops signing at once: receivers should accept both during their own switch.
  router.post('/admin/clients/:clientId/callback-secret', admin, async (req, res) => {
    const clientId = String(req.params.clientId);
    const secret = await rotateClientCallbackSecret(stores, clientId, {
      encryptionKey: otpKeysFromConfig(ctx.config).encryptionKey,
      comments: commentsQuery(req.query),
    });
    res.status(200).json({ client_id: clientId, callback_secret: secret });
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
