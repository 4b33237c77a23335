/**
 * `@agentmail/bridge-claude`: Claude Code as an AgentMail host — the `agentmail-claude` daemon
 * (one headless `claude -p` per mail) and the plugin in `plugin/` (MCP mail tools + permission
 * hooks from `@agentmail/host-tools`).
 */
export { pinnedClaudeBinary } from './claude-bin.js';
export {
  CLAUDE_KILL_GRACE_MS,
  type ClaudeRunOptions,
  type ClaudeRunReport,
  runClaude,
} from './claude-run.js';
export {
  type ClaudeBridgeConfig,
  DEFAULT_CLAUDE_MODELS,
  defaultPluginDir,
  readClaudeConfig,
} from './config.js';
export {
  BRIDGE_VERSION,
  HOST_NAME,
  MAIL_TOOL_PREFIX,
  MCP_SERVER_KEY,
  MCP_SERVER_NAME,
  PLATFORM,
  PLUGIN_NAME,
} from './constants.js';
export {
  type ClaudeBridge,
  type ClaudeBridgeOptions,
  createClaudeBridge,
  type SelfCheckResult,
  selfCheck,
} from './daemon.js';
export type { ClaudeEvent } from './events.js';
export { parseStreamLine, type StreamLine } from './stream-json.js';
export {
  findTranscript,
  isSessionId,
  listSessions,
  projectsDir,
  readSessionModel,
  readTranscriptHead,
  type TranscriptHead,
} from './transcripts.js';
export {
  checkRunSetup,
  claudeTurns,
  RUN_ENV,
  type RunArgsInput,
  runArgs,
  runEnv,
  type SetupCheck,
} from './turns.js';
