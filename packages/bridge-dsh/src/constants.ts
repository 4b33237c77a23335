/** The plugin's Cordis name (the row id in examples and the name in DSH's plugin inventory). */
export const PLUGIN_NAME = 'agentmail';

/** Bridge version sent with register and heartbeat. */
export const BRIDGE_VERSION = 'agentmail-dsh/0.1.0';

/** The DSH version this bridge is built and tested against (pinned exactly, see README). */
export const DSH_VERSION = '0.1.0-rc.8';

/** Prefix of the DSH session ids of mail sessions: `agentmail-<uuid>`. */
export const MAIL_SESSION_PREFIX = 'agentmail-';
