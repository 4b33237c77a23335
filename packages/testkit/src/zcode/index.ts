/**
 * `@agentmail/testkit/zcode`: a faithful stand-in of ZCode's CLI (v3.15.1 contract, see the
 * module comments of cli.ts, prompt-run.ts and the files they use; sources in research/zcode.md).
 * Bridges' tests bundle {@link ZCODE_STANDIN_ENTRY} into one executable file (with
 * `better-sqlite3` left external) and point their driver at it; a person trying a driver by hand
 * uses the built bin `agentmail-zcode-standin` (`dist/zcode/main.js`) as the `zcode` executable.
 */
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export { type CliIo, runZcodeCli, ZCODE_STANDIN_VERSION } from './cli.js';
export {
  loadConfig,
  type ProviderConfig,
  resolveModel,
  type StandinConfig,
  userConfigPath,
} from './config.js';
export { matchesHookMatcher } from './hooks.js';
export { mcpCapability, mcpToolName } from './mcp.js';
export { applyPreToolDecision, type CollaborationMode, checkPermission } from './permissions.js';
export { sessionDbPath } from './session-store.js';

const here = fileURLToPath(import.meta.url);

/**
 * The stand-in's entry file next to this module: `src/zcode/main.ts` from the sources,
 * `dist/zcode/main.js` from the build (the package's bin `agentmail-zcode-standin`).
 */
export const ZCODE_STANDIN_ENTRY = join(dirname(here), `main${extname(here)}`);

/**
 * Environment variable of the stand-in choosing its permission client for asks: unset or
 * `deny-broker` (headless ZCode: an immediate deny racing the PermissionRequest hooks),
 * `person-allows` / `person-denies` (the "ask works" variant: the hooks are heard first, then a
 * person at ZCode's own prompt answers).
 */
export const ZCODE_STANDIN_PERMISSION_CLIENT_ENV = 'ZCODE_STANDIN_PERMISSION_CLIENT';
