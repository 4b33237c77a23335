/**
 * The admin API under /api/v1/admin (an admin's user token): users, agent keys, allowed models.
 */
import {
  AllowedModelsRequest,
  CreateUserRequest,
  Id,
  IssueAgentKeyRequest,
  ROUTES,
} from '@agentmail/protocol';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { authenticateUser } from '../auth.js';
import type { GatewayContext } from '../context.js';
import { iso } from '../context.js';
import {
  allowedModelsView,
  createUser,
  issueAgentKey,
  revokeAgentKey,
  setAllowedModels,
} from '../directory.js';
import { typed } from './shared.js';

const PlatformParams = z.strictObject({ platform: z.string().min(1).max(40) });

/** Register the admin routes on an instance prefixed `/api/v1`. */
export function adminRoutes(ctx: GatewayContext) {
  return async (root: FastifyInstance): Promise<void> => {
    const app = typed(root);
    app.addHook('onRequest', async (req) => {
      req.user = await authenticateUser(ctx.db, req, true);
    });

    app.post(ROUTES.adminUsers, { schema: { body: CreateUserRequest } }, async (req) => {
      const { token } = await createUser(ctx, req.body.name, req.body.admin ?? false);
      return { name: req.body.name, admin: req.body.admin ?? false, token };
    });

    app.get(ROUTES.adminUsers, async () => {
      const rows = await ctx.db.selectFrom('users').selectAll().orderBy('name').execute();
      return {
        users: rows.map((u) => ({
          name: u.name,
          admin: u.is_admin === 1,
          created_at: iso(Number(u.created_at)),
        })),
      };
    });

    app.post(ROUTES.adminAgentKeys, { schema: { body: IssueAgentKeyRequest } }, async (req) => {
      const { keyId, key } = await issueAgentKey(ctx, req.body.agent_name);
      return { key_id: keyId, agent_name: req.body.agent_name, key };
    });

    app.delete(ROUTES.adminAgentKey, { schema: { params: z.strictObject({ id: Id }) } }, async (req) => {
      await revokeAgentKey(ctx, req.params.id);
      return { status: 'revoked', key_id: req.params.id };
    });

    app.get(ROUTES.adminAllowedModels, { schema: { params: PlatformParams } }, async (req) =>
      allowedModelsView(ctx, req.params.platform),
    );

    app.put(
      ROUTES.adminAllowedModels,
      { schema: { params: PlatformParams, body: AllowedModelsRequest } },
      async (req) => setAllowedModels(ctx, req.params.platform, req.body.models),
    );
  };
}
