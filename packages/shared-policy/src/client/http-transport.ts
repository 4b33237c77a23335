/**
 * The transport seam of `ApiClient`: one request out, one answer back. Browser-safe; the
 * default {@link fetchTransport} runs on a standard `fetch`, the Node one (`undiciTransport`,
 * node-transfer.ts) on undici's `request`.
 */

/** A file to upload: its bytes (a file-backed `Blob` streams) and the name stored with it. */
export interface UploadFile {
  blob: Blob;
  filename: string;
}

/** One HTTP request as the client hands it to its transport. */
export interface HttpRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  /** JSON text, or one file for a multipart body (field `field`). */
  body?: string | { field: string; file: UploadFile };
  /** Aborts the request and the reading of its body (timeout and caller together). */
  signal: AbortSignal;
  /** An undici dispatcher for the Node transport; other transports ignore it. */
  dispatcher?: unknown;
}

/** An answer as the client reads it: status and headers at once, the body once, by one of the three. */
export interface HttpAnswer {
  readonly status: number;
  /** A response header, lower-case name; `undefined` when absent. */
  header(name: string): string | undefined;
  text(): Promise<string>;
  chunks(): AsyncIterable<Uint8Array>;
  /** Drop the body unread. Never rejects. */
  cancel(): Promise<void>;
}

/**
 * Sends one request; rejects when no answer came (the client turns that into
 * `AM_GATEWAY_NETWORK`). Redirects are not followed: a 3xx is an answer like any other.
 */
export type HttpTransport = (request: HttpRequest) => Promise<HttpAnswer>;

/** The part of the standard `fetch` {@link fetchTransport} uses. */
export type FetchFunction = (
  url: string,
  init: {
    method: string;
    headers: Record<string, string>;
    body?: unknown;
    signal: AbortSignal;
    redirect: 'manual';
  },
) => Promise<{
  status: number;
  headers: { get(name: string): string | null };
  body: ReadableStream<Uint8Array> | null;
  text(): Promise<string>;
}>;

/**
 * The transport over a standard `fetch` and its `FormData` (the browser's, by default). In a
 * browser, a 3xx of `redirect: 'manual'` arrives as status 0: an error that is not transient.
 */
export function fetchTransport(
  fetchImpl: FetchFunction = (url, init) => globalThis.fetch(url, init as RequestInit),
  FormDataImpl: new () => {
    append(name: string, value: Blob, filename?: string): void;
  } = globalThis.FormData,
): HttpTransport {
  return async (request) => {
    let body: unknown = request.body;
    if (typeof request.body === 'object') {
      const form = new FormDataImpl();
      form.append(request.body.field, request.body.file.blob, request.body.file.filename);
      body = form;
    }
    const res = await fetchImpl(request.url, {
      method: request.method,
      headers: request.headers,
      signal: request.signal,
      redirect: 'manual',
      ...(body === undefined ? {} : { body }),
    });
    const stream = res.body;
    return {
      status: res.status,
      header: (name) => res.headers.get(name) ?? undefined,
      text: () => res.text(),
      async *chunks() {
        if (stream === null) return;
        const reader = stream.getReader();
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) return;
            yield value;
          }
        } finally {
          reader.releaseLock();
        }
      },
      cancel: async () => {
        await stream?.cancel().catch(() => {});
      },
    };
  };
}
