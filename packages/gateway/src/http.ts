/**
 * HTTP plumbing shared by every route: strict decoding with the G-10 messages of
 * `@agentmail/protocol`, the JSON body parser that reports syntax errors by byte offset, and the
 * error handler that turns every failure into the G-13 JSON body.
 */
import { type DecodeErrorBody, decode, jsonSyntaxError } from '@agentmail/protocol';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { isBusyError } from './db/database.js';
import { GatewayError, isGatewayError } from './errors.js';

/** JSON bodies larger than this are refused with 413, in bytes. @default 2 MiB */
export const JSON_BODY_MAX_BYTES = 2 * 1024 * 1024;

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
  // Responses are built from protocol types; plain JSON serialisation.
  app.setSerializerCompiler(() => (data: unknown) => JSON.stringify(data));
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

/** The G-13 body of an error, with its status. */
export function errorResponse(err: unknown): { status: number; body: Record<string, unknown> } {
  if (err instanceof DecodeError) return { status: 400, body: { ...err.body, code: 'AM_GW_BAD_REQUEST' } };
  if (isGatewayError(err)) {
    const body: Record<string, unknown> = {
      ...err.extra,
      error: err.wireError,
      detail: err.message,
      code: err.code,
    };
    if (err.detail !== undefined) body.detail = `${err.message}: ${err.detail}`;
    if (err.suggestion !== undefined) body.suggestion = err.suggestion;
    return { status: err.status, body };
  }
  if (isBusyError(err))
    return {
      status: 503,
      body: {
        error: 'unavailable',
        detail: 'the store is busy',
        suggestion: 'retry later',
        code: 'AM_GW_STORAGE_BUSY',
      },
    };
  const fe = err as Partial<FastifyError>;
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return {
        status: 415,
        body: {
          error: 'invalid_request',
          detail: `unsupported content type: ${fe.message ?? ''}`,
          suggestion: 'send JSON with "content-type: application/json" (uploads: multipart/form-data)',
          code: 'AM_GW_UNSUPPORTED_MEDIA_TYPE',
        },
      };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
      return {
        status: 413,
        body: {
          error: 'payload_too_large',
          detail: fe.message ?? 'body too large',
          code: 'AM_GW_PAYLOAD_TOO_LARGE',
        },
      };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return {
        status: 400,
        body: { error: 'invalid_request', detail: fe.message ?? '', code: 'AM_GW_BAD_REQUEST' },
      };
    default:
      break;
  }
  if (typeof fe.statusCode === 'number' && fe.statusCode === 429)
    return {
      status: 429,
      body: {
        error: 'rate_limited',
        detail: fe.message ?? 'rate limited',
        suggestion: 'retry later',
        code: 'AM_GW_RATE_LIMIT',
      },
    };
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500)
    return {
      status: fe.statusCode,
      body: { error: 'invalid_request', detail: fe.message ?? 'bad request', code: 'AM_GW_BAD_REQUEST' },
    };
  return {
    status: 500,
    body: {
      error: 'internal',
      detail: 'internal error; the Gateway log has the cause',
      suggestion: 'retry later',
      code: 'AM_GW_INTERNAL',
    },
  };
}

/** Install the G-13 error and not-found handlers. 5xx are logged as errors, 4xx as info. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    const { status, body } = errorResponse(err);
    if (status >= 500) req.log.error({ err, code: body.code }, 'request failed');
    else req.log.info({ code: body.code, status, detail: body.detail }, 'request refused');
    if (reply.raw.headersSent) return;
    void reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(body));
  });
  app.setNotFoundHandler((req: FastifyRequest, reply: FastifyReply) => {
    void reply
      .code(404)
      .type('application/json; charset=utf-8')
      .send(
        JSON.stringify({
          error: 'not_found',
          detail: `no route ${req.method} ${req.url.split('?')[0] ?? ''}`,
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
