/**
 * HTTP plumbing shared by every route: strict decoding with the G-10 messages of
 * `@agentmail/protocol`, the JSON body parser that reports syntax errors by byte offset, and the
 * error handler that turns every failure into the G-13 JSON body.
 */
import { type DecodeErrorBody, decode, jsonSyntaxError, MAIL_BODY_MAX_CHARS } from '@agentmail/protocol';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { isBusyError } from './db/database.js';
import { GatewayError, isGatewayError } from './errors.js';

/** JSON bodies larger than this are refused with 413, in bytes. @default 2 MiB */
export const JSON_BODY_MAX_BYTES = 2 * 1024 * 1024;

/**
 * Request size limit of the routes that carry a mail body (send, forward), in bytes: above any
 * request whose body keeps to `MAIL_BODY_MAX_CHARS` (a character takes at most 6 bytes in JSON,
 * `\u0001`), so the body's own limit is the one a sender meets, with one message. @default 8 MiB
 */
export const MAIL_REQUEST_MAX_BYTES = 8 * 1024 * 1024;

/** The endpoints whose body carries a mail body or comment ({@link MAIL_REQUEST_MAX_BYTES}). */
export const MAIL_BODY_ENDPOINTS: ReadonlySet<string> = new Set(['send', 'meSend', 'forward', 'meForward']);

/**
 * Longest path parameter (an id) the router takes, in characters (Fastify's `maxParamLength`);
 * longer ones are a 414 `AM_GW_URI_TOO_LONG`. @default 100
 */
export const PATH_PARAM_MAX_CHARS = 100;

/** A decode failure carrying its G-10 body. */
export class DecodeError extends Error {
  readonly body: DecodeErrorBody;
  statusCode = 400;
  constructor(body: DecodeErrorBody) {
    super(body.detail);
    this.name = 'DecodeError';
    this.body = body;
  }
}

function isZodSchema(schema: unknown): schema is z.ZodType {
  return (
    typeof schema === 'object' && schema !== null && typeof (schema as z.ZodType).safeParse === 'function'
  );
}

/**
 * Fastify validator compiler over protocol's `decode` (SPEC G-10): strict schemas, messages that
 * name the field, the expected JSON type and the accepted fields; a missing body says so.
 */
export function installDecoding(app: FastifyInstance): void {
  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (!isZodSchema(schema)) throw new Error(`route schema for ${httpPart ?? '?'} is not a zod schema`);
    return (data: unknown) => {
      // Fastify passes null for a missing body; report it as the empty body it is.
      const input = httpPart === 'body' && data === null ? undefined : data;
      const r = decode(schema, input);
      return r.ok ? { value: r.value } : { error: new DecodeError(r.error) };
    };
  });
  // Answers are serialised (and, in tests, checked) per route by registerEndpoint.
  // JSON only (uploads add multipart): a JSON text sent as text/plain is a 415 naming the type,
  // not a string body that fails decoding with "expected object, got string".
  app.removeContentTypeParser('text/plain');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: JSON_BODY_MAX_BYTES },
    (req: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      if (text.trim() === '') {
        done(null, undefined);
        return;
      }
      try {
        done(null, JSON.parse(text));
      } catch (err) {
        const schema = req.routeOptions.schema?.body;
        done(new DecodeError(jsonSyntaxError(isZodSchema(schema) ? schema : ({} as z.ZodType), text, err)));
      }
    },
  );
}

/** Longest piece of client input (a URL, a content type, a framework message) echoed in an error detail, in characters. @default 120 */
export const ECHO_MAX_CHARS = 120;

/** `text`, cut to {@link ECHO_MAX_CHARS} with its full length named, so a huge input is never echoed. */
export function clip(text: string, max: number = ECHO_MAX_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;
}

/** What {@link errorResponse} may use of the request to word a framework error. */
export interface ErrorRequestInfo {
  /** The request's `content-type` header. */
  contentType?: string | undefined;
  /** The body limit of the route, in bytes. */
  bodyLimitBytes?: number | undefined;
}

/** A G-13 answer: status, JSON body and extra headers (`retry-after`). */
export interface ErrorResponse {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

function framework(
  status: number,
  error: string,
  code: string,
  detail: string,
  suggestion?: string,
  extra: Record<string, unknown> = {},
): ErrorResponse {
  const body: Record<string, unknown> = { ...extra, error, detail, code };
  if (suggestion !== undefined) body.suggestion = suggestion;
  return { status, body, headers: {} };
}

/**
 * The G-13 answer of an error: a {@link GatewayError}, a decode error, a busy store, or one of
 * Fastify's own errors (bad URL, parameter too long, media type, body too large…), each mapped to
 * `{error, detail, suggestion?, code}` with its status and no echo of a huge input. Anything else
 * is a 500 whose cause stays in the log.
 */
export function errorResponse(err: unknown, info: ErrorRequestInfo = {}): ErrorResponse {
  if (err instanceof DecodeError)
    return { status: 400, body: { ...err.body, code: 'AM_GW_BAD_REQUEST' }, headers: {} };
  if (isGatewayError(err)) {
    const body: Record<string, unknown> = {
      ...err.extra,
      error: err.wireError,
      detail: err.message,
      code: err.code,
    };
    if (err.detail !== undefined) body.detail = `${err.message}: ${err.detail}`;
    if (err.suggestion !== undefined) body.suggestion = err.suggestion;
    const headers: Record<string, string> = {};
    if (err.retryAfterSeconds !== undefined) headers['retry-after'] = String(err.retryAfterSeconds);
    return { status: err.status, body, headers };
  }
  if (isBusyError(err))
    return framework(503, 'unavailable', 'AM_GW_STORAGE_BUSY', 'the store is busy', 'retry later');
  const fe = err as Partial<FastifyError>;
  switch (fe.code) {
    case 'FST_ERR_BAD_URL':
      return framework(
        400,
        'invalid_request',
        'AM_GW_BAD_REQUEST',
        'the URL path is not valid: a "%" must be followed by two hex digits that encode UTF-8',
        'percent-encode every path segment (encodeURIComponent) and use ids as the Gateway gave them',
      );
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return framework(
        414,
        'invalid_request',
        'AM_GW_URI_TOO_LONG',
        `a path parameter is longer than ${PATH_PARAM_MAX_CHARS} characters`,
        'use an id from your inbox, thread or list; ids are short',
        { max_chars: PATH_PARAM_MAX_CHARS },
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': {
      const type = info.contentType === undefined ? 'none' : `"${clip(info.contentType)}"`;
      return framework(
        415,
        'invalid_request',
        'AM_GW_UNSUPPORTED_MEDIA_TYPE',
        `content type ${type} is not accepted here`,
        'send JSON with "content-type: application/json" (uploads: multipart/form-data)',
      );
    }
    case 'FST_ERR_CTP_BODY_TOO_LARGE': {
      const limit = info.bodyLimitBytes ?? JSON_BODY_MAX_BYTES;
      const mail = info.bodyLimitBytes === MAIL_REQUEST_MAX_BYTES;
      return framework(
        413,
        'payload_too_large',
        'AM_GW_PAYLOAD_TOO_LARGE',
        mail
          ? `the request is larger than ${limit} bytes: a mail body has at most ${MAIL_BODY_MAX_CHARS} characters`
          : `the body is larger than ${limit} bytes`,
        'send less: split the text, or upload large content as an attachment',
        { max_bytes: limit, ...(mail ? { max_chars: MAIL_BODY_MAX_CHARS } : {}) },
      );
    }
    case 'FST_REQ_FILE_TOO_LARGE':
      return framework(413, 'payload_too_large', 'AM_GW_PAYLOAD_TOO_LARGE', 'the file is too large');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return framework(
        400,
        'invalid_request',
        'AM_GW_BAD_REQUEST',
        'the body length does not match the content-length header',
        'send the whole body, with a content-length that counts its bytes',
      );
    default:
      break;
  }
  if (typeof fe.statusCode === 'number' && fe.statusCode === 429)
    return framework(
      429,
      'rate_limited',
      'AM_GW_RATE_LIMIT',
      clip(fe.message ?? 'rate limited'),
      'retry later',
    );
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500)
    return framework(
      fe.statusCode,
      'invalid_request',
      'AM_GW_BAD_REQUEST',
      clip(fe.message ?? 'bad request'),
    );
  return framework(
    500,
    'internal',
    'AM_GW_INTERNAL',
    'internal error; the Gateway log has the cause',
    'retry later',
  );
}

/**
 * True when a failure only means the client went away (aborted upload, closed socket): nobody
 * reads the answer, and it is no fault of the Gateway, so it is logged at info, not as an error.
 */
export function isClientAbort(err: unknown, req: FastifyRequest): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : '';
  if (code === 'ECONNRESET' || code === 'ECONNABORTED' || code === 'ERR_STREAM_PREMATURE_CLOSE') return true;
  if (message === 'aborted' || /premature close/i.test(message)) return true;
  // The socket is gone and the body never completed.
  return req.raw.destroyed && !req.raw.complete;
}

function sendError(req: FastifyRequest, reply: FastifyReply, err: unknown): void {
  const contentType = req.headers['content-type'];
  const { status, body, headers } = errorResponse(err, {
    contentType: typeof contentType === 'string' ? contentType : undefined,
    bodyLimitBytes: req.routeOptions?.bodyLimit,
  });
  if (status >= 500 && isClientAbort(err, req))
    req.log.info({ code: body.code, err: (err as Error).message }, 'request aborted by the client');
  // A 5xx GatewayError's extra fields (e.g. `endpoint`, `field` of AM_GW_RESPONSE_INVALID) go into the log line.
  else if (status >= 500)
    req.log.error({ ...(isGatewayError(err) ? err.extra : {}), err, code: body.code }, 'request failed');
  else req.log.info({ code: body.code, status, detail: body.detail }, 'request refused');
  if (reply.raw.headersSent || reply.raw.destroyed) return;
  void reply.code(status).headers(headers).type('application/json; charset=utf-8').send(JSON.stringify(body));
}

/**
 * Fastify's `frameworkErrors` option: errors raised before routing (a URL that does not decode, a
 * path parameter over the length limit) get the G-13 body too.
 */
export function frameworkErrorHandler(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  sendError(req, reply, err);
}

/** Install the G-13 error and not-found handlers. 5xx are logged as errors, 4xx and client aborts as info. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    sendError(req, reply, err);
  });
  app.setNotFoundHandler((req: FastifyRequest, reply: FastifyReply) => {
    void reply
      .code(404)
      .type('application/json; charset=utf-8')
      .send(
        JSON.stringify({
          error: 'not_found',
          detail: `no route ${req.method} ${clip(req.url.split('?')[0] ?? '')}`,
          suggestion: 'see docs/PROTOCOL.md for the routes',
          code: 'AM_GW_NOT_FOUND',
        }),
      );
  });
}

/** Throw the G-13 404 for a missing resource. */
export function notFound(what: string, suggestion?: string): GatewayError {
  return new GatewayError('NOT_FOUND', `${what} not found`, suggestion === undefined ? {} : { suggestion });
}
