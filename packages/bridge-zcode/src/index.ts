/**
 * `@agentmail/bridge-zcode`: ZCode as an AgentMail host — the `agentmail-zcode` daemon (one
 * headless `zcode --prompt` per mail) and the plugin in `plugin/` (MCP mail tools + the permission
 * hook from `@agentmail/host-tools`), which ZCode loads from `plugins.dirs`.
 */
export {
  defaultPluginDir,
  HOOK_TIMEOUT_MS,
  readZcodeConfig,
  type WorkspaceMode,
  type ZcodeBridgeConfig,
} from './config.js';
export {
  BRIDGE_VERSION,
  HOOK_HOST_ID,
  HOST_NAME,
  MAIL_TOOL_PREFIX,
  MCP_SERVER_KEY,
  MCP_SERVER_NAME,
  PLATFORM,
  PLUGIN_ID,
  PLUGIN_NAME,
} from './constants.js';
export { createZcodeBridge, type ZcodeBridge, type ZcodeBridgeOptions } from './daemon.js';
export type { ZcodeEvent } from './events.js';
export { checkPluginEntry, gatedToolNames, hookMatcherCovers, selfCheck } from './self-check.js';
export { isZcodeSessionId, parseStreamLine, type ResultLine, type StreamLine } from './stream-json.js';
export {
  type RunArgsInput,
  runArgs,
  runEnv,
  type SetupCheck,
  type ZcodeMode,
  zcodeModeFor,
  zcodeTurns,
} from './turns.js';
export {
  findZcodeSession,
  readSessionModel,
  readZcodeModels,
  readZcodeSessions,
  zcodeConfigPath,
  zcodeDbPath,
} from './zcode-home.js';
