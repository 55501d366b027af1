import { Router } from 'express';
import { rotateCallbackSecret } from '../../core/clients/callback-secret.js';
import { findClient, listClients, type Client } from '../../core/clients/clients.repository.js';
import {
  registerClient,
  removeClient,
  updateClient,
  type RegisterClientInput,
  type UpdateClientInput,
} from '../../core/clients/clients.service.js';
import { NotFoundError } from '../../core/errors/app-error.js';
import { otpKeysFromConfig } from '../../core/otp/otp-keys.js';
import { requireAdminToken } from '../middleware/admin-auth.middleware.js';
import { jsonBody } from '../middleware/json-body.middleware.js';
import { validateBody } from '../middleware/validate-body.middleware.js';
import type { ServiceContext } from '../service-context.js';

/** The admin API's view of a client (schemas/http/admin-clients.client.json). */
export function toClientResponse(client: Client): Record<string, unknown> {
  return {
    client_id: client.clientId,
    enterpriseId: client.enterpriseId,
    name: client.name,
    scopes: client.scopes,
    allowedIps: client.allowedIps,
    redirectUris: client.redirectUris,
    webOrigins: client.webOrigins,
    public: client.isPublic,
    firstParty: client.firstParty,
    createdAt: client.createdAt.toISOString(),
  };
}

export function adminClientsRoutes(ctx: ServiceContext): Router {
  const router = Router();
  const admin = requireAdminToken(ctx);

  router.post('/admin/clients', admin, ...jsonBody(ctx), validateBody('admin-clients.create.json'), async (req, res) => {
    const { comments, ...input } = req.body as RegisterClientInput & { comments?: string };
    const { client, clientSecret, callbackSecret } = await registerClient(ctx.mongo, input, {
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

  // The old secret stops signing at once: receivers should accept both during their own switch.
  router.post('/admin/clients/:clientId/callback-secret', admin, async (req, res) => {
    const clientId = String(req.params.clientId);
    const client = await findClient(ctx.mongo, clientId);
    if (!client || client.isPublic) throw new NotFoundError('Client not found');
    const secret = await rotateCallbackSecret(ctx.mongo, clientId, otpKeysFromConfig(ctx.config).encryptionKey);
    if (secret === null) throw new NotFoundError('Client not found');
    res.status(200).json({ client_id: clientId, callback_secret: secret });
  });

  router.get('/admin/clients', admin, async (_req, res) => {
    res.json((await listClients(ctx.mongo)).map(toClientResponse));
  });

  router.get('/admin/clients/:clientId', admin, async (req, res) => {
    const client = await findClient(ctx.mongo, String(req.params.clientId));
    if (!client) throw new NotFoundError('Client not found');
    res.json(toClientResponse(client));
  });

  router.patch('/admin/clients/:clientId', admin, ...jsonBody(ctx), validateBody('admin-clients.update.json'), async (req, res) => {
    const { comments, ...input } = req.body as UpdateClientInput & { comments?: string };
    res.json(toClientResponse(await updateClient(ctx.mongo, String(req.params.clientId), input, comments)));
  });

  router.delete('/admin/clients/:clientId', admin, async (req, res) => {
    const clientId = String(req.params.clientId);
    const comments = typeof req.query.comments === 'string' ? req.query.comments.slice(0, 1000) : undefined;
    await removeClient(ctx.mongo, clientId, comments);
    res.status(204).end();
  });

  return router;
}
