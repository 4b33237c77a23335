/**
 * The recipients of a send: each address parsed and in its one normal spelling (SPEC G-1..G-3),
 * looked up as a person or an agent, each name once, `to` before `cc`.
 */
import {
  type Address,
  formatAddress,
  isAddressError,
  isNormalizedPath,
  normalizeAbsolutePath,
  parseAddress,
} from '@agentmail/protocol';
import type { Db } from './context.js';
import { GatewayError } from './errors.js';
import type { Recipient } from './mail-send-types.js';

function parseField(value: string, field: string): Address {
  let address: Address;
  try {
    address = parseAddress(value);
  } catch (err) {
    if (isAddressError(err, 'AM_ADDRESS_INVALID'))
      throw new GatewayError('BAD_REQUEST', `field "${field}": ${(err as Error).message}`, {
        suggestion: 'write name, name@/absolute/path. or name@/absolute/path.session',
        extra: { field },
      });
    throw err;
  }
  // One directory, one spelling: `/x/../y`, `//x` or `/x/` would make a second default session.
  if (!isNormalizedPath(address.path)) {
    const normal = formatAddress({ ...address, path: normalizeAbsolutePath(address.path) });
    throw new GatewayError(
      'BAD_REQUEST',
      `field "${field}": address ${JSON.stringify(value)}: the path ${JSON.stringify(address.path)} is not normalised`,
      {
        detail: 'a path has no ".", ".." or empty segments and no trailing "/" (SPEC G-3)',
        suggestion: `write ${normal}`,
        extra: { field, normalized_address: normal },
      },
    );
  }
  return address;
}

async function lookupRecipient(
  db: Db,
  address: Address,
  field: string,
  role: 'to' | 'cc',
): Promise<Recipient> {
  const user = await db
    .selectFrom('users')
    .select(['id', 'name'])
    .where('name', '=', address.name)
    .executeTakeFirst();
  if (user) return { name: user.name, human: true, userId: user.id, role, address, field };
  const agent = await db
    .selectFrom('agents')
    .select('name')
    .where('name', '=', address.name)
    .executeTakeFirst();
  if (agent) return { name: agent.name, human: false, userId: null, role, address, field };
  // A key issued for the name whose bridge never registered: say so (one indexed lookup, on the
  // refusal path only), so the sender starts the bridge instead of doubting the name (issue 20).
  const keyed = await db
    .selectFrom('agent_keys')
    .select('id')
    .where('agent_name', '=', address.name)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (keyed)
    throw new GatewayError(
      'UNKNOWN_RECIPIENT',
      `field "${field}": the agent "${address.name}" has a key but has not registered yet: its bridge has not run with that key; mail to it works once its bridge has started once`,
      {
        suggestion: `start the bridge of "${address.name}" with its key once, then send again`,
        extra: { field, key_issued: true },
      },
    );
  throw new GatewayError(
    'UNKNOWN_RECIPIENT',
    `field "${field}": no agent or person is named "${address.name}"`,
    {
      suggestion:
        'list contacts (GET /api/v1/agent/contacts) or ask for suggestions (…/contacts/suggest?name=)',
      extra: { field },
    },
  );
}

/**
 * The recipients of `to` and `cc`, in that order, deduplicated by name (the first mention counts).
 * @throws GatewayError `AM_GW_BAD_REQUEST` (an address that does not parse or is not normalised,
 *   naming the field), `AM_GW_UNKNOWN_RECIPIENT` (no such person or agent)
 */
export async function lookupRecipients(db: Db, to: string, cc: readonly string[]): Promise<Recipient[]> {
  const recipients: Recipient[] = [];
  const seen = new Set<string>();
  const add = async (value: string, field: string, role: 'to' | 'cc') => {
    const address = parseField(value, field);
    const r = await lookupRecipient(db, address, field, role);
    const k = `${r.human ? 'u' : 'a'}:${r.name}`;
    if (seen.has(k)) return;
    seen.add(k);
    recipients.push(r);
  };
  await add(to, 'to', 'to');
  for (const [i, value] of cc.entries()) await add(value, `cc[${i}]`, 'cc');
  return recipients;
}
