/** Version string sent to the Gateway. */
export const BRIDGE_VERSION = 'agentmail-opencode/0.1.0';
/** Key of the process-wide bridge on `globalThis` (every opencode instance shares it). */
export const BRIDGE_GLOBAL_KEY = Symbol.for('agentmail.bridge-opencode');
