import { openAsBlob } from 'node:fs';
import { basename } from 'node:path';
import {
  AllowedModelsResponse,
  ContactsResponse,
  CreateUserResponse,
  type DecideRequest,
  DecideResponse,
  ErrorBody,
  InboxResponse,
  IssueAgentKeyResponse,
  MailResponse,
  MarkReadResponse,
  PermissionsResponse,
  type PersonSendRequest,
  routePath,
  SendMailResponse,
  ThreadResponse,
  UploadAttachmentResponse,
  UsersResponse,
} from '@agentmail/protocol';
import { type Dispatcher, FormData, request } from 'undici';
import { z } from 'zod';
import { CliError } from './errors.js';

/** Time a CLI request may take, headers and body together, in ms. @default 30_000 */
export const REQUEST_TIMEOUT_MS = 30_000;

/** Path of the health check; it lives outside the `/api/v1` prefix. */
export const HEALTHZ_PATH = '/healthz';

/** Where and as whom the CLI talks to the Gateway. */
export interface ApiClientOptions {
  /** Gateway base URL without the API prefix, e.g. `http://127.0.0.1:8787`. */
  baseUrl: string;
  /** User token (`Authorization: Bearer …`); admin routes need an admin user's token. */
  token?: string | undefined;
  /** Per-request timeout in ms. @default REQUEST_TIMEOUT_MS */
  timeoutMs?: number;
  /** undici dispatcher (tests, proxies). @default undici's global dispatcher */
  dispatcher?: Dispatcher;
}

/** One HTTP request of the human/admin API. */
export interface ApiRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Full path including the API prefix, e.g. `routePath('meInbox')`. */
  path: string;
  /** Query parameters; `undefined` values are left out. */
  query?: Readonly<Record<string, string | number | undefined>>;
  /** JSON body. */
  json?: unknown;
  /** Multipart body (attachments). */
  form?: FormData;
  /** Send the user token. @default true */
  auth?: boolean;
}

/** Response schema for answers whose shape the CLI does not rely on. */
const AnyAnswer = z.unknown();

/** Health answer: `status` plus whatever the server adds (version, counts…). */
export const HealthAnswer = z.looseObject({ status: z.string() });
export type HealthAnswer = z.infer<typeof HealthAnswer>;

function describeNetworkError(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    const code = (err as { code?: unknown }).code ?? (cause as { code?: unknown } | undefined)?.code;
    if (err.name === 'TimeoutError' || err.name === 'AbortError') return 'timed out';
    return typeof code === 'string' ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}

function parseErrorBody(status: number, text: string): ErrorBody {
  try {
    const parsed = ErrorBody.safeParse(JSON.parse(text));
    if (parsed.success) return parsed.data;
  } catch {
    // not JSON: fall through and keep the text as detail
  }
  const detail = text.trim().slice(0, 500);
  return detail === '' ? { error: `http_${status}` } : { error: `http_${status}`, detail };
}

/**
 * Send one request to the Gateway and decode the 2xx answer with `schema`.
 *
 * @throws CliError `AM_CLI_NO_TOKEN` when the route needs a token and none is configured.
 * @throws CliError `AM_CLI_UNREACHABLE` on network failure or timeout.
 * @throws CliError `AM_CLI_SERVER_REFUSED` on a non-2xx answer, with `status` and the parsed
 *   `body` attached (see SPEC G-13).
 * @throws CliError `AM_CLI_BAD_RESPONSE` when a 2xx answer does not match `schema`.
 */
export async function apiRequest<S extends z.ZodType>(
  options: ApiClientOptions,
  req: ApiRequest,
  schema: S,
): Promise<z.output<S>> {
  const url = new URL(req.path, options.baseUrl);
  for (const [key, value] of Object.entries(req.query ?? {})) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  const headers: Record<string, string> = { accept: 'application/json' };
  if (req.auth !== false) {
    if (options.token === undefined || options.token === '') {
      throw new CliError('NO_TOKEN', `${req.method} ${req.path} needs a user token and none is configured`, {
        suggestion: 'pass --token, set AGENTMAIL_TOKEN, or run `agentmail login --url <url> --token <token>`',
      });
    }
    headers.authorization = `Bearer ${options.token}`;
  }
  let body: string | FormData | undefined;
  if (req.form !== undefined) body = req.form;
  else if (req.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(req.json);
  }
  const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  let status: number;
  let text: string;
  try {
    const res = await request(url, {
      method: req.method,
      headers,
      ...(body === undefined ? {} : { body }),
      signal: AbortSignal.timeout(timeoutMs),
      ...(options.dispatcher === undefined ? {} : { dispatcher: options.dispatcher }),
    });
    status = res.statusCode;
    text = await res.body.text();
  } catch (err) {
    throw new CliError(
      'UNREACHABLE',
      `cannot reach the Gateway at ${options.baseUrl} (${describeNetworkError(err)})`,
      {
        suggestion: 'start it with `agentmail serve`, or point --url / AGENTMAIL_GATEWAY_URL at it',
        cause: err,
      },
    );
  }
  if (status < 200 || status > 299) {
    const errorBody = parseErrorBody(status, text);
    throw new CliError('SERVER_REFUSED', `${req.method} ${req.path} answered ${status} ${errorBody.error}`, {
      status,
      body: errorBody,
    });
  }
  let value: unknown;
  try {
    value = text === '' ? undefined : JSON.parse(text);
  } catch (err) {
    throw new CliError('BAD_RESPONSE', `${req.method} ${req.path} answered ${status} with invalid JSON`, {
      status,
      cause: err,
    });
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where =
      issue === undefined || issue.path.length === 0 ? 'the body' : `field "${issue.path.join('.')}"`;
    throw new CliError(
      'BAD_RESPONSE',
      `${req.method} ${req.path} answered ${status} with an unexpected shape: ${where}: ${issue?.message ?? 'invalid'}`,
      { status, suggestion: 'the CLI and the Gateway versions may differ; upgrade both' },
    );
  }
  return parsed.data;
}

/**
 * Typed client of the human (`/api/v1/me/…`) and admin (`/api/v1/admin/…`) API, used by the
 * `agentmail` CLI. Every method throws the {@link CliError}s of {@link apiRequest}.
 *
 * @example
 * const api = new HumanApi({ baseUrl: 'http://127.0.0.1:8787', token });
 * const { mails } = await api.inbox({ status: 'unread', limit: 10 });
 */
export class HumanApi {
  readonly options: ApiClientOptions;
  constructor(options: ApiClientOptions) {
    this.options = options;
  }

  /** `GET /healthz` (no token). */
  health(): Promise<HealthAnswer> {
    return apiRequest(this.options, { method: 'GET', path: HEALTHZ_PATH, auth: false }, HealthAnswer);
  }

  /** `GET /me/contacts`: agents (online, last seen) and people (see SPEC G-25). */
  contacts(): Promise<ContactsResponse> {
    return apiRequest(this.options, { method: 'GET', path: routePath('meContacts') }, ContactsResponse);
  }

  /** `GET /me/inbox`: unread by default (see SPEC §3). */
  inbox(query: { status: 'unread' | 'all'; limit: number }): Promise<InboxResponse> {
    return apiRequest(this.options, { method: 'GET', path: routePath('meInbox'), query }, InboxResponse);
  }

  /** `GET /me/mail/{id}`: one mail with body, participants and attachments. */
  mail(id: string): Promise<MailResponse> {
    return apiRequest(this.options, { method: 'GET', path: routePath('meMail', { id }) }, MailResponse);
  }

  /** `GET /me/mail/{id}/thread`: one page of the thread, oldest first. */
  thread(id: string, offset: number): Promise<ThreadResponse> {
    return apiRequest(
      this.options,
      { method: 'GET', path: routePath('meThread', { id }), query: { offset } },
      ThreadResponse,
    );
  }

  /** `POST /me/mail/read`: mark exactly these mails read. */
  markRead(ids: string[]): Promise<MarkReadResponse> {
    return apiRequest(
      this.options,
      { method: 'POST', path: routePath('meMarkRead'), json: { ids } },
      MarkReadResponse,
    );
  }

  /** `POST /me/mail/send`. */
  send(body: PersonSendRequest): Promise<SendMailResponse> {
    return apiRequest(
      this.options,
      { method: 'POST', path: routePath('meSend'), json: body },
      SendMailResponse,
    );
  }

  /**
   * `POST /me/attachments`: upload one file (multipart field `file`, ≤25 MB), streamed from disk.
   * @throws CliError `AM_CLI_FILE_UNREADABLE` when the file cannot be opened.
   */
  async upload(filePath: string): Promise<UploadAttachmentResponse> {
    let blob: Blob;
    try {
      blob = await openAsBlob(filePath);
    } catch (err) {
      throw new CliError(
        'FILE_UNREADABLE',
        `cannot read attachment "${filePath}": ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
    const form = new FormData();
    form.append('file', blob, basename(filePath));
    return apiRequest(
      this.options,
      { method: 'POST', path: routePath('meUploadAttachment'), form },
      UploadAttachmentResponse,
    );
  }

  /** `GET /me/permissions?status=pending|all`. */
  permissions(status: 'pending' | 'all'): Promise<PermissionsResponse> {
    return apiRequest(
      this.options,
      { method: 'GET', path: routePath('mePermissions'), query: { status } },
      PermissionsResponse,
    );
  }

  /** `POST /me/permissions/{id}/decide` (see SPEC G-38, G-21). */
  decide(id: string, body: DecideRequest): Promise<DecideResponse> {
    return apiRequest(
      this.options,
      { method: 'POST', path: routePath('meDecide', { id }), json: body },
      DecideResponse,
    );
  }

  /** `POST /admin/users`: the token in the answer is shown once. */
  createUser(name: string, admin: boolean): Promise<CreateUserResponse> {
    return apiRequest(
      this.options,
      { method: 'POST', path: routePath('adminUsers'), json: { name, admin } },
      CreateUserResponse,
    );
  }

  /** `GET /admin/users`. */
  users(): Promise<UsersResponse> {
    return apiRequest(this.options, { method: 'GET', path: routePath('adminUsers') }, UsersResponse);
  }

  /** `POST /admin/agent-keys`: a key bound to one agent name, shown once (see SPEC G-12). */
  issueAgentKey(agentName: string): Promise<IssueAgentKeyResponse> {
    return apiRequest(
      this.options,
      { method: 'POST', path: routePath('adminIssueAgentKey'), json: { agent_name: agentName } },
      IssueAgentKeyResponse,
    );
  }

  /** `DELETE /admin/agent-keys/{id}`. */
  async revokeAgentKey(keyId: string): Promise<void> {
    await apiRequest(
      this.options,
      { method: 'DELETE', path: routePath('adminRevokeAgentKey', { id: keyId }) },
      AnyAnswer,
    );
  }

  /** `GET /admin/platforms/{platform}/models`: the ordered selection, stale flags (see SPEC G-26). */
  allowedModels(platform: string): Promise<AllowedModelsResponse> {
    return apiRequest(
      this.options,
      { method: 'GET', path: routePath('adminAllowedModels', { platform }) },
      AllowedModelsResponse,
    );
  }

  /** `PUT /admin/platforms/{platform}/models`: replace the selection (≤10, see SPEC G-26). */
  setAllowedModels(platform: string, models: string[]): Promise<AllowedModelsResponse> {
    return apiRequest(
      this.options,
      { method: 'PUT', path: routePath('adminAllowedModels', { platform }), json: { models } },
      AllowedModelsResponse,
    );
  }
}
