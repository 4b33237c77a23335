/**
 * Small typed HTTP calls to the Gateway for the harness (person, admin and agent routes), with
 * undici, decoding answers with the `@agentmail/protocol` schemas.
 */
import { routePath } from '@agentmail/protocol';
import { FormData, request } from 'undici';
import type { z } from 'zod';
import { TESTKIT_ERROR_CODES, TestkitError } from '../errors.js';

/** Where and as whom to call: a Gateway origin and a user token or agent key. */
export interface ApiTarget {
  /** Gateway origin, e.g. `http://127.0.0.1:40123`. */
  url: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token: string;
}

/** An HTTP answer as received (no check of the status). */
export interface RawAnswer {
  status: number;
  /** Parsed JSON, or the text when the body is not JSON, `undefined` when empty. */
  body: unknown;
}

/** Query values; `undefined` entries are left out. */
export type Query = Readonly<Record<string, string | number | undefined>>;

function withQuery(path: string, query: Query | undefined): string {
  if (query === undefined) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
  const text = params.toString();
  return text === '' ? path : `${path}?${text}`;
}

/** One JSON call; any status is returned. */
export async function apiRaw(
  target: ApiTarget,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  options: { body?: unknown; query?: Query } = {},
): Promise<RawAnswer> {
  const res = await request(new URL(withQuery(path, options.query), target.url), {
    method,
    headers: {
      authorization: `Bearer ${target.token}`,
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const text = await res.body.text();
  let body: unknown = text === '' ? undefined : text;
  try {
    if (text !== '') body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.statusCode, body };
}

function failed(what: string, answer: RawAnswer): TestkitError {
  return new TestkitError(
    TESTKIT_ERROR_CODES.API,
    `${what} answered HTTP ${answer.status}: ${JSON.stringify(answer.body)}`,
  );
}

/**
 * One JSON call that must answer 2xx; the answer is decoded with `schema`.
 * @throws {TestkitError} `AM_TESTKIT_API` on another status or an answer `schema` rejects.
 */
export async function apiCall<S extends z.ZodType>(
  target: ApiTarget,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  schema: S,
  options: { body?: unknown; query?: Query } = {},
): Promise<z.output<S>> {
  const answer = await apiRaw(target, method, path, options);
  const what = `${method} ${path}`;
  if (answer.status < 200 || answer.status > 299) throw failed(what, answer);
  const parsed = schema.safeParse(answer.body);
  if (!parsed.success)
    throw new TestkitError(
      TESTKIT_ERROR_CODES.API,
      `${what} answered a body the protocol schema rejects (${parsed.error.message}): ${JSON.stringify(answer.body)}`,
    );
  return parsed.data;
}

/** A file to attach: its name, bytes (a string is UTF-8) and MIME type. */
export interface FileSpec {
  filename: string;
  content: string | Uint8Array;
  /** @default 'application/octet-stream' */
  contentType?: string;
}

/**
 * Upload one file as multipart field `file` to an upload route (`meAttachments` or `uploadAttachment`).
 * @throws {TestkitError} `AM_TESTKIT_API` when the Gateway does not answer 2xx.
 */
export async function uploadFile<S extends z.ZodType>(
  target: ApiTarget,
  route: 'meUploadAttachment' | 'uploadAttachment',
  file: FileSpec,
  schema: S,
): Promise<z.output<S>> {
  const form = new FormData();
  const bytes = typeof file.content === 'string' ? new TextEncoder().encode(file.content) : file.content;
  form.set(
    'file',
    new Blob([bytes], { type: file.contentType ?? 'application/octet-stream' }),
    file.filename,
  );
  const path = routePath(route);
  const res = await request(new URL(path, target.url), {
    method: 'POST',
    headers: { authorization: `Bearer ${target.token}` },
    body: form,
  });
  const text = await res.body.text();
  const answer: RawAnswer = { status: res.statusCode, body: text === '' ? undefined : JSON.parse(text) };
  if (answer.status < 200 || answer.status > 299) throw failed(`POST ${path}`, answer);
  return schema.parse(answer.body);
}

/** A downloaded attachment. */
export interface Download {
  bytes: Uint8Array;
  contentType: string;
  /** From `Content-Disposition`, `''` when none. */
  filename: string;
}

/**
 * Download an attachment's bytes (`GET` on `path`).
 * @throws {TestkitError} `AM_TESTKIT_API` when the Gateway does not answer 200.
 */
export async function downloadFile(target: ApiTarget, path: string): Promise<Download> {
  const res = await request(new URL(path, target.url), {
    method: 'GET',
    headers: { authorization: `Bearer ${target.token}` },
  });
  const bytes = new Uint8Array(await res.body.arrayBuffer());
  if (res.statusCode !== 200)
    throw failed(`GET ${path}`, { status: res.statusCode, body: new TextDecoder().decode(bytes) });
  const disposition = String(res.headers['content-disposition'] ?? '');
  const name =
    /filename\*=UTF-8''([^;]+)/i.exec(disposition)?.[1] ?? /filename="?([^";]+)"?/i.exec(disposition)?.[1];
  return {
    bytes,
    contentType: String(res.headers['content-type'] ?? ''),
    filename: name === undefined ? '' : decodeURIComponent(name),
  };
}
