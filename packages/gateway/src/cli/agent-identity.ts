/**
 * Which agent an agent key belongs to, asked of the Gateway without registering anything: a
 * register under a name the key is not bound to is refused with the bound name (`bound_name`,
 * `AM_GW_KEY_BOUND_TO_OTHER_AGENT`, SPEC G-12). Used by `doctor` and `agentmail mcp`.
 */
import { randomUUID } from 'node:crypto';
import type { GatewayClient } from '@agentmail/shared-policy/client';

/**
 * The agent name `client`'s key is bound to.
 * @returns the bound name; undefined when the Gateway refused without naming one
 * @throws the client's error when the probe did not reach a refusal with a name (no answer, an
 *   unknown key: `GatewayNetworkError`, `GatewayHttpError` 401, …)
 */
export async function keyAgentName(client: GatewayClient): Promise<string | undefined> {
  try {
    // keep_existing: should the probe name ever exist, nothing of it changes.
    await client.register({
      name: `doctor-probe-${randomUUID().slice(0, 8)}`,
      platform: 'doctor',
      keep_existing: true,
    });
    return undefined;
  } catch (err) {
    const bound = (err as { body?: { bound_name?: unknown } }).body?.bound_name;
    if (typeof bound === 'string') return bound;
    throw err;
  }
}
