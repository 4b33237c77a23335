/**
 * The turn RPC's handlers on the server side (SPEC B-21): what the bridge implements for each
 * method, reading a request line's envelope, the params and result schema of each method, and
 * running a handler.
 */
import type { QuestionAnswers } from '@agentmail/shared-policy';
import { messageOf } from '@agentmail/shared-policy';
import type { z } from 'zod';
import type { EmitEvent } from '../events.js';
import {
  AskQuestionParams,
  CallToolParams,
  CallToolResult,
  ContextParams,
  type PermissionAnswer,
  PermissionAnswerSchema,
  PermissionQuery,
  QuestionAnswersSchema,
  RecordSendParams,
  RecordSendResult,
  TurnContextView,
} from './schemas.js';
import { TURN_RPC_METHODS, type TurnRpcAnswer, type TurnRpcMethod, type TurnRpcWireError } from './wire.js';

/** What a handler learns about the call besides its params. */
export interface TurnRpcCall {
  /**
   * Aborted when the caller hung up (a hook killed by its host's timeout), the turn was closed
   * (`TurnRpcLease.close`) or the server closes. The answer is then already sent (or
   * nobody is left to read it): a handler should stop waiting and clean up.
   */
  signal: AbortSignal;
}

/**
 * What the bridge does for the calls of a turn's host processes. `T` is the bridge's own turn
 * object, as given to `TurnRpcServer.openTurn`. Every params object has been validated;
 * every result is validated before it leaves (an invalid one is answered as `AM_RPC_HANDLER_FAILED`).
 * A handler that throws or rejects answers the call with an error carrying its message
 * (`AM_RPC_HANDLER_FAILED`, its own `code` as `remoteCode`); the server keeps serving.
 */
export interface TurnRpcHandlers<T> {
  /** The turn's context view (never a secret; SPEC B-21). */
  context(turn: T, call: TurnRpcCall): Promise<TurnContextView>;
  /** Run mail tool `name` (SPEC B-17) with the bridge's Gateway client; `isError` defaults to false. */
  callTool(turn: T, params: CallToolParams, call: TurnRpcCall): Promise<{ text: string; isError?: boolean }>;
  /**
   * Decide one tool call: mode, grants, ask a person by mail and wait (SPEC P-1..P-6). May take
   * minutes; nothing here times it out. Throwing denies (the client fails closed).
   */
  decidePermission(turn: T, params: PermissionQuery, call: TurnRpcCall): Promise<PermissionAnswer>;
  /** Ask a person the questions (one question mail) and map the answers back (SPEC P-9). */
  askQuestion(turn: T, params: AskQuestionParams, call: TurnRpcCall): Promise<QuestionAnswers>;
  /** Record explicit send targets of the turn (SPEC B-10). */
  recordSend(turn: T, params: RecordSendParams, call: TurnRpcCall): Promise<void>;
}

const REQUEST_FIELDS = ['id', 'method', 'token', 'params'];

/** The params schema of each method. */
export const TURN_RPC_PARAMS: Record<TurnRpcMethod, z.ZodType> = {
  context: ContextParams,
  callTool: CallToolParams,
  decidePermission: PermissionQuery,
  askQuestion: AskQuestionParams,
  recordSend: RecordSendParams,
};

/** The result schema of each method (a result is checked before it leaves). */
const TURN_RPC_RESULTS: Record<TurnRpcMethod, z.ZodType> = {
  context: TurnContextView,
  callTool: CallToolResult,
  decidePermission: PermissionAnswerSchema,
  askQuestion: QuestionAnswersSchema,
  recordSend: RecordSendResult,
};

/** True for a method of the turn RPC. */
export function isMethod(m: string): m is TurnRpcMethod {
  return (TURN_RPC_METHODS as readonly string[]).includes(m);
}

/** A request line's envelope, or the error answer for it. */
export type ReadRequest =
  | { ok: true; id: number | string; method: string; token: unknown; params: unknown }
  | { ok: false; id: number | string | null; error: TurnRpcWireError };

/** The envelope of a request line, checked strictly (G-10 style: the message names the field). */
export function readRequest(line: string): ReadRequest {
  const invalid = (id: number | string | null, message: string): ReadRequest => ({
    ok: false,
    id,
    error: {
      code: 'AM_RPC_REQUEST_INVALID',
      message: `${message}. Accepted fields: ${REQUEST_FIELDS.join(', ')}.`,
    },
  });
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return invalid(null, 'the request line is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return invalid(null, 'the request must be a JSON object');
  }
  const v = value as Record<string, unknown>;
  const id = typeof v.id === 'number' || typeof v.id === 'string' ? v.id : null;
  if (id === null) return invalid(null, 'field "id": expected number or string');
  const unknown = Object.keys(v).filter((k) => !REQUEST_FIELDS.includes(k));
  if (unknown.length > 0)
    return invalid(
      id,
      `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `"${k}"`).join(', ')}`,
    );
  if (typeof v.method !== 'string') return invalid(id, 'field "method": expected string');
  // A missing or non-string token is refused as AM_RPC_TOKEN_INVALID, like a wrong one.
  return { ok: true, id, method: v.method, token: v.token, params: v.params };
}

/**
 * Run the handler of `method` for `turn` with decoded `params`; every outcome becomes an answer
 * (never rejects): a throw is `AM_RPC_HANDLER_FAILED` with the handler's message (its own
 * `code` as `remoteCode`), a result that fails its schema too (event `rpc_problem` for both).
 */
export async function runHandler<T>(
  h: TurnRpcHandlers<T>,
  turn: T,
  method: TurnRpcMethod,
  params: unknown,
  signal: AbortSignal,
  emit: EmitEvent,
): Promise<TurnRpcAnswer> {
  const call: TurnRpcCall = { signal };
  let raw: unknown;
  try {
    // JSON carries no `undefined`, so decoded params fit the handler types (see schemas.ts).
    switch (method) {
      case 'context':
        raw = await h.context(turn, call);
        break;
      case 'callTool':
        raw = await h.callTool(turn, params as CallToolParams, call);
        break;
      case 'decidePermission':
        raw = await h.decidePermission(turn, params as PermissionQuery, call);
        break;
      case 'askQuestion':
        raw = await h.askQuestion(turn, params as AskQuestionParams, call);
        break;
      case 'recordSend':
        await h.recordSend(turn, params as RecordSendParams, call);
        raw = {};
        break;
    }
  } catch (err) {
    const message = messageOf(err);
    const remoteCode = (err as { code?: unknown } | null)?.code;
    emit({ type: 'rpc_problem', problem: 'handler_failed', method, error: message });
    return {
      id: null,
      error: {
        code: 'AM_RPC_HANDLER_FAILED',
        message,
        ...(typeof remoteCode === 'string' ? { remoteCode } : {}),
      },
    };
  }
  const checked = TURN_RPC_RESULTS[method].safeParse(raw);
  if (!checked.success) {
    const first = checked.error.issues[0];
    const where = first?.path.join('.') || 'result';
    const message = `the bridge's ${method} handler returned an invalid result at "${where}" (${first?.message ?? 'invalid'})`;
    emit({ type: 'rpc_problem', problem: 'result_invalid', method, error: message });
    return { id: null, error: { code: 'AM_RPC_HANDLER_FAILED', message } };
  }
  return { id: null, result: checked.data };
}
