/**
 * What the bridge answers on the turn RPC (SPEC B-21): every call of a host's tool or hook
 * process runs here, in the bridge, with the turn's own client and seams — never the agent key.
 */
import { normalizePermissionMode, type Platform } from '@agentmail/shared-policy';
import { runMailTool } from './mail-tools.js';
import type { TurnRpcHandlers } from './rpc/server.js';
import type { ActiveTurn } from './turn-registry.js';

/**
 * The turn RPC's handlers (B-21) over a running turn: its context view (no secret), a mail tool
 * with the turn's live client (B-17), its permission flow (P-1..P-8), one question mail (P-9,
 * a failure answered as an error) and its explicit-send record (B-10).
 */
export function turnRpcHandlers(agentName: string, platform: Platform): TurnRpcHandlers<ActiveTurn> {
  return {
    context: async (t) => ({
      mailId: t.mail.mail_id,
      sessionId: t.mail.session_id,
      replyAddress: t.mail.reply_address,
      selfAddress: t.mail.self_address,
      permissionMode: normalizePermissionMode(t.mail.permission_mode),
      cwd: t.cwd,
      agentName,
      platform,
      locale: t.locale,
    }),
    callTool: async (t, params, call) => {
      const r = await runMailTool(
        params.name,
        params.arguments,
        { ...t.toolContext, signal: call.signal },
        t.locale,
      );
      return { text: r.text, isError: r.isError === true };
    },
    decidePermission: async (t, q) => {
      const o = await t.decide(q);
      if (o.allow === true) return o.always ? { allow: true, always: true } : { allow: true };
      return { allow: false, reason: o.reason };
    },
    askQuestion: async (t, params, call) => {
      // A caller that hangs up (a hook its host timed out) ends the wait: the question is withdrawn.
      const o = await t.ask(params.questions, { signal: call.signal });
      if (!o.ok) throw new Error(o.error);
      return o.answers;
    },
    recordSend: (t, params) => t.recordSend(params.targets),
  };
}
