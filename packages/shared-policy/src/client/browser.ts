/**
 * @agentmail/shared-policy/client/browser: the browser-safe core of the Gateway clients (the web
 * mailbox): the typed `ApiClient` on `fetch`, the person/admin facade, errors, the SSE reader
 * (`SseClient` on `fetch`: reconnect, backoff, Last-Event-ID) and its frame decoder. No Node
 * built-in, no undici (test/client/browser-core.test.ts bundles this entry).
 */

export {
  ApiClient,
  type ApiClientOptions,
  type ApiDownload,
  type ApiHooks,
  type ApiRequestInfo,
  type CallArgs,
  type CallInput,
  type CallOptions,
  type CallOutput,
  dispositionFilename,
  GATEWAY_TIMEOUT_MS,
  GATEWAY_TRANSFER_TIMEOUT_MS,
  gatewayUrl,
} from './api-client.js';
export {
  ERROR_DETAIL_MAX_CHARS,
  type GatewayCallError,
  GatewayHttpError,
  GatewayNetworkError,
  GatewayResponseError,
  isPermanent,
  isTransient,
  parseErrorBody,
  type ResponseProblem,
} from './api-errors.js';
export {
  type FetchFunction,
  fetchTransport,
  type HttpAnswer,
  type HttpRequest,
  type HttpTransport,
  type UploadFile,
} from './http-transport.js';
export { PersonApi, type PersonInboxQuery, type PersonThreadQuery } from './person-api.js';
export {
  type AgentEventSchemas,
  SSE_HEALTHY_AFTER_MS,
  SSE_IDLE_TIMEOUT_MS,
  SSE_INITIAL_BACKOFF_MS,
  SSE_MAX_BACKOFF_MS,
  SseClient,
  type SseClientOptions,
  type SseOpenInfo,
  type SseSleep,
  sseBackoffMs,
} from './sse-client.js';
export {
  decodeSseEvent,
  type SseDecodeResult,
  type SseFrame,
  SseFrameDecoder,
  type SseFrameDecoderOptions,
} from './sse-decoder.js';
