/**
 * @agentmail/gateway: the AgentMail Gateway server (SPEC §2–§4). Embedded SQLite by default.
 */
export { type BuildAppHooks, buildApp } from './app.js';
export {
  BLOB_CHUNK_BYTES,
  type BlobStore,
  DirectoryBlobStore,
  PostgresBlobStore,
  type SweepReport,
  sweepBlobs,
} from './blobs.js';
export {
  BLOB_SWEEP_AGE_MS,
  BLOB_SWEEP_INTERVAL_MS,
  DEFAULT_ATTACHMENT_MAX_BYTES,
  DEFAULT_HOP_LIMIT,
  DEFAULT_MAX_ROUNDS,
  DEFAULT_NEW_SESSIONS_PER_HOUR,
  DEFAULT_REQUESTS_PER_MINUTE,
  type GatewayOptions,
  ONLINE_WINDOW_MS,
  type ResolvedConfig,
  resolveConfig,
} from './config.js';
export type { GatewayContext } from './context.js';
export {
  acquireDataDirLock,
  DATA_DIR_ERRORS,
  DataDirError,
  type DataDirErrorCode,
  type DataDirLock,
  LOCK_FILE_NAME,
  prepareDataDir,
  VIRTUAL_FS_ROOTS,
} from './data-dir.js';
export {
  type ConstraintViolation,
  checkDatabaseUrl,
  constraintViolation,
  DatabaseUrlError,
  type GatewayDb,
  isUniqueViolation,
  migrateToLatest,
  openDatabase,
  POSTGRES_POOL_SIZE,
  redactDatabaseUrl,
  SQLITE_FILE_NAME,
  type StoreDialect,
  type StoreOptions,
  storeDialect,
} from './db/database.js';
export type { Database } from './db/schema.js';
export {
  GATEWAY_ERRORS,
  GatewayError,
  type GatewayErrorCode,
  type GatewayErrorKind,
  isGatewayError,
} from './errors.js';
export { EVENT_LOG_MAX_PER_STREAM, EventHub, SSE_KEEPALIVE_MS } from './event-hub.js';
export { type Clock, systemClock } from './ids.js';
export { ADMIN_USER_NAME, createAdminIfMissing, type InitResult, initDataDir } from './init.js';
