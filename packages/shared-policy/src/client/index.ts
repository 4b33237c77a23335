/**
 * @agentmail/shared-policy/client: the Gateway clients that bridges, the `agentmail` CLI and the
 * testkit share — one typed HTTP client driven by the endpoint table (`ApiClient`, with the agent
 * facade `GatewayClient` and the person/admin facade `PersonApi`) and one SSE reader generic over
 * an event-schema map (`SseClient`, `SseFrameDecoder`).
 *
 * api-client, api-errors, http-transport, person-api, sse-client and sse-decoder are browser-safe
 * (fetch, no Node built-in; /client/browser exports them); agent-key, gateway-client,
 * node-transfer and node-sse are Node (undici, files). The `SseClient` exported here is node-sse's:
 * the browser-safe one with undici as its default transport.
 */

export { AGENT_KEY_CREDENTIAL, AGENT_KEY_FILE_VARIABLE, readAgentKey } from './agent-key.js';

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
  IDEMPOTENT_RETRY_DELAYS_MS,
  newIdempotencyKey,
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
  type DownloadOptions,
  GatewayClient,
  type GatewayClientOptions,
  type UploadOptions,
} from './gateway-client.js';
export {
  type FetchFunction,
  fetchTransport,
  type HttpAnswer,
  type HttpRequest,
  type HttpTransport,
  type UploadFile,
} from './http-transport.js';
export { SseClient } from './node-sse.js';
export {
  checkDownloadTarget,
  type DownloadResult,
  type DownloadTarget,
  type FileUploadOptions,
  fileUpload,
  saveDownload,
  undiciTransport,
} from './node-transfer.js';
export { PersonApi, type PersonInboxQuery, type PersonThreadQuery } from './person-api.js';
export {
  type AgentEventSchemas,
  SSE_HEALTHY_AFTER_MS,
  SSE_IDLE_TIMEOUT_MS,
  SSE_INITIAL_BACKOFF_MS,
  SSE_MAX_BACKOFF_MS,
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
