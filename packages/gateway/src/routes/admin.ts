/**
 * The admin API under /api/v1/admin (an admin's user token): users, agent keys, allowed models.
 */
import type { FastifyInstance } from 'fastify';
import { createUser, issueAgentKey, listAgentKeys, resetUserToken, revokeAgentKey } from '../accounts.js';
import { allowedModelsView, setAllowedModels } from '../agents.js';
import type { GatewayContext } from '../context.js';
import { iso } from '../context.js';
import { registerEndpoint } from './endpoint.js';

/** Register the admin routes (an admin's user token). */
export function adminRoutes(ctx: GatewayContext) {
  return async (app: FastifyInstance): Promise<void> => {
    registerEndpoint(app, ctx, 'adminCreateUser', async (req) => {
      const { token } = await createUser(ctx, req.body.name, req.body.admin ?? false);
      return { name: req.body.name, admin: req.body.admin ?? false, token };
    });

    registerEndpoint(app, ctx, 'adminUsers', async () => {
      const rows = await ctx.db.selectFrom('users').selectAll().orderBy('name').execute();
      return {
        users: rows.map((u) => ({
          name: u.name,
          admin: u.is_admin === 1,
          created_at: iso(Number(u.created_at)),
        })),
      };
    });

    registerEndpoint(app, ctx, 'adminResetToken', async (req) =>
      resetUserToken(ctx.db, req.params.name, ctx.config.clock()),
    );

    registerEndpoint(app, ctx, 'adminAgentKeys', async () => listAgentKeys(ctx));

    registerEndpoint(app, ctx, 'adminIssueAgentKey', async (req) => {
      const { keyId, key } = await issueAgentKey(ctx, req.body.agent_name);
      return { key_id: keyId, agent_name: req.body.agent_name, key };
    });

    registerEndpoint(app, ctx, 'adminRevokeAgentKey', async (req) => {
      await revokeAgentKey(ctx, req.params.id);
      return { status: 'revoked' as const, key_id: req.params.id };
    });

    registerEndpoint(app, ctx, 'adminAllowedModels', async (req) =>
      allowedModelsView(ctx, req.params.platform),
    );

    registerEndpoint(app, ctx, 'adminSetAllowedModels', async (req) =>
      setAllowedModels(ctx, req.params.platform, req.body.models),
    );
  };
}
