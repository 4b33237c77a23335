/**
 * Permission and question requests as the person sees them (SPEC G-38). Filing one is
 * permission-request.ts; deciding, withdrawing and expiring one is permission-decision.ts.
 */
import type { PermissionView } from '@agentmail/protocol';
import type { Selectable } from 'kysely';
import type { Db } from './context.js';
import { iso } from './context.js';
import type { PermissionsTable } from './db/schema.js';
import { permissionStatusOf } from './mail-views.js';

/** A stored request. */
export type PermissionRow = Selectable<PermissionsTable>;

function parseOptions(text: string): string[] {
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

/** A request as the person sees it. */
export function permissionView(row: PermissionRow, sessionAlias: string): PermissionView {
  return {
    id: row.id,
    agent_name: row.agent_name,
    session_id: row.session_id,
    session_alias: sessionAlias,
    kind: row.kind === 'question' ? 'question' : 'approval',
    question: row.question,
    options: parseOptions(row.options),
    multi_select: row.multi_select === 1,
    context: row.context,
    status: permissionStatusOf(row.status),
    decision: row.decision,
    answers: parseOptions(row.answers),
    note: row.note ?? '',
    mail_id: row.mail_id,
    created_at: iso(Number(row.created_at)),
    decided_at: row.decided_at === null ? null : iso(Number(row.decided_at)),
  };
}

/** The requests addressed to a person, newest first. */
export async function listPermissions(
  db: Db,
  userId: string,
  status: 'pending' | 'all',
): Promise<PermissionView[]> {
  let q = db
    .selectFrom('permissions')
    .innerJoin('sessions', 'sessions.id', 'permissions.session_id')
    .selectAll('permissions')
    .select('sessions.alias as session_alias')
    .where('permissions.target_user_id', '=', userId);
  if (status === 'pending') q = q.where('permissions.status', '=', 'pending');
  const rows = await q.orderBy('permissions.id', 'desc').execute();
  return rows.map((r) => permissionView(r, r.session_alias ?? ''));
}
