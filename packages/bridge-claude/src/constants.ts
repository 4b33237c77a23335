/** Names and ids the bridge, its plugin and Claude Code share. */

/** The platform the bridge registers (SPEC G-26: the admin's model selection is per platform) and its human name: from host.json. */
export { DISPLAY_NAME as HOST_NAME, PLATFORM } from './host.js';

/** The bridge version sent with register and heartbeat. */
export const BRIDGE_VERSION = 'agentmail-claude/0.1.0';

/** The plugin's name (`.claude-plugin/plugin.json`). */
export const PLUGIN_NAME = 'agentmail';

/** The MCP server's key in the plugin's `.mcp.json`. */
export const MCP_SERVER_KEY = 'mail';

/** How Claude Code names the plugin's MCP server in `init.mcp_servers`. */
export const MCP_SERVER_NAME = `plugin:${PLUGIN_NAME}:${MCP_SERVER_KEY}`;

/** The prefix Claude Code gives the plugin's tools: `mcp__plugin_agentmail_mail__read_mail`. */
export const MAIL_TOOL_PREFIX = `mcp__plugin_${PLUGIN_NAME}_${MCP_SERVER_KEY}__`;
