/**
 * @agentmail/shared-policy/client: the Gateway clients (HTTP and SSE, on undici) that bridges, the
 * `agentmail` CLI and the testkit share.
 */

export {
  type CallOptions,
  type DownloadOptions,
  type DownloadResult,
  GATEWAY_TIMEOUT_MS,
  GATEWAY_TRANSFER_TIMEOUT_MS,
  GatewayClient,
  type GatewayClientOptions,
  GatewayHttpError,
  GatewayNetworkError,
  gatewayUrl,
  isPermanent,
  isTransient,
  type UploadOptions,
} from './gateway-client.js';
export {
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
