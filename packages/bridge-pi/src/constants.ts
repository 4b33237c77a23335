/** Heartbeat period, in ms (see SPEC G-25). @default 30_000 */
export const HEARTBEAT_INTERVAL_MS_DEFAULT = 30_000;
/** Time a worker gets to stop after `shutdown` before it is killed, in ms (B-15). @default 5_000 */
export const WORKER_STOP_GRACE_MS = 5_000;
/** Version string sent to the Gateway. */
export const BRIDGE_VERSION = 'agentmail-pi/0.1.0';
