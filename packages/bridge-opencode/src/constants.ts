/** Version string sent to the Gateway. */
export const BRIDGE_VERSION = 'agentmail-opencode/0.1.0';
/** Longest pause between two attempts to reach the Gateway at start, in ms. @default 60_000 */
export const START_RETRY_MAX_MS = 60_000;
/** Key of the process-wide bridge on `globalThis` (every opencode instance shares it). */
export const BRIDGE_GLOBAL_KEY = Symbol.for('agentmail.bridge-opencode');
