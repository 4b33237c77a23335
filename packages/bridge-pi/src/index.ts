/**
 * @agentmail/bridge-pi: the AgentMail bridge for pi. Entry points: the `agentmail-pi` daemon,
 * the worker entry, and the pi extension (`@agentmail/bridge-pi/extension`).
 */
export { type PiBridgeConfig, readConfig } from './config.js';
export { BRIDGE_VERSION, WORKER_STOP_GRACE_MS } from './constants.js';
export { PiBridgeDaemon } from './daemon.js';
export type { PiEvent } from './events.js';
export { createMailExtension, type MailExtensionOptions } from './extension.js';
export { createPermissionHandler, type DecideToolCall } from './permission-seam.js';
export { type MailToolContextSource, piMailTools, toTypeBox } from './pi-tools.js';
export {
  findPiSessionFile,
  HEADER_MAX_BYTES,
  listPiSessions,
  mailSessionFile,
  type PiSessionHeader,
  parseHeader,
  readFirstLine,
} from './session-files.js';
