/** Names and ids the bridge, its plugin and ZCode share. */

/** The platform the bridge registers (SPEC G-26: the admin's model selection is per platform) and its human name: from host.json. */
export { DISPLAY_NAME as HOST_NAME, PLATFORM } from './host.js';

/** The bridge version sent with register and heartbeat. */
export const BRIDGE_VERSION = 'agentmail-zcode/0.1.0';

/** The plugin's name (`.zcode-plugin/plugin.json`). */
export const PLUGIN_NAME = 'agentmail';

/** ZCode's id of a plugin loaded from `plugins.dirs`: `<name>@inline`. */
export const PLUGIN_ID = `${PLUGIN_NAME}@inline`;

/** The MCP server's key in the plugin's `.mcp.json`. */
export const MCP_SERVER_KEY = 'mail';

/** How ZCode names the plugin's MCP server: `plugin:<name>:<key>`. */
export const MCP_SERVER_NAME = `plugin:${PLUGIN_NAME}:${MCP_SERVER_KEY}`;

/** The prefix ZCode gives the plugin's tools: `mcp__plugin_agentmail_mail__read_mail`. */
export const MAIL_TOOL_PREFIX = `mcp__plugin_${PLUGIN_NAME}_${MCP_SERVER_KEY}__`;

/** The hook runner's id for ZCode (`agentmail-hook zcode`, host-tools `ZCODE_HOST`). */
export const HOOK_HOST_ID = 'zcode';
