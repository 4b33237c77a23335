/**
 * The harness's Gateway calls: shared-policy's typed client (`ApiClient` on undici, its
 * `PersonApi` and `GatewayClient` facades), with a refusal turned into the harness's own
 * `AM_TESTKIT_API` (the Gateway's status and body in the message, the client's error as `cause`).
 */
import {
  ApiClient,
  type ApiDownload,
  type GatewayCallError,
  PersonApi,
  type UploadFile,
  undiciTransport,
} from '@agentmail/shared-policy/client';
import { TESTKIT_ERROR_CODES, TestkitError } from '../errors.js';

/** Where and as whom to call: a Gateway origin and a user token or agent key. */
export interface ApiTarget {
  /** Gateway origin, e.g. `http://127.0.0.1:40123`. */
  url: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token: string;
}

/** A file to attach: its name, bytes (a string is UTF-8) and MIME type. */
export interface FileSpec {
  filename: string;
  content: string | Uint8Array;
  /** @default 'application/octet-stream' */
  contentType?: string;
}

/** A downloaded attachment. */
export interface Download {
  bytes: Uint8Array;
  contentType: string;
  /** From `Content-Disposition`, `''` when none. */
  filename: string;
}

function testkitError(error: GatewayCallError): TestkitError {
  const body = error.code === 'AM_GATEWAY_HTTP' ? `: ${JSON.stringify(error.body)}` : '';
  return new TestkitError(TESTKIT_ERROR_CODES.API, `${error.message}${body}`, { cause: error });
}

/**
 * The harness's client of `target`: every refusal, network failure or answer that breaks the
 * contract is a `TestkitError` `AM_TESTKIT_API` (the shared-policy error is its `cause`).
 */
export function harnessClient(target: ApiTarget): ApiClient {
  return new ApiClient({
    baseUrl: target.url,
    token: target.token,
    transport: undiciTransport,
    hooks: { beforeError: testkitError },
  });
}

/** The person (or admin) API of `target`'s token; errors as {@link harnessClient}. */
export function personApi(target: ApiTarget): PersonApi {
  return new PersonApi(harnessClient(target));
}

/** A {@link FileSpec} as the client's upload input (an in-memory Blob). */
export function uploadFileOf(file: FileSpec): UploadFile {
  const bytes = typeof file.content === 'string' ? new TextEncoder().encode(file.content) : file.content;
  return {
    blob: new Blob([bytes], { type: file.contentType ?? 'application/octet-stream' }),
    filename: file.filename,
  };
}

/** Read a whole download into a {@link Download}. @throws {TestkitError} `AM_TESTKIT_API` */
export async function readDownload(download: ApiDownload): Promise<Download> {
  return { bytes: await download.bytes(), contentType: download.contentType, filename: download.filename };
}
