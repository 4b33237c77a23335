/** Time a worker gets to stop after `shutdown` before it is killed, in ms (B-15). @default 5_000 */
export const WORKER_STOP_GRACE_MS = 5_000;
/** Version string sent to the Gateway. */
export const BRIDGE_VERSION = 'agentmail-pi/0.1.0';
/**
 * How long `start()` waits for the first event stream to open before it runs the catch-up anyway,
 * in ms (B-1, B-20). @default 10_000
 */
export const FIRST_SSE_OPEN_WAIT_MS = 10_000;
/** Time a probe child (pi's permission hook and catalogue, src/probe.ts) may take, in ms. @default 60_000 */
export const PROBE_TIMEOUT_MS = 60_000;

/** Nice value of worker processes (and their autogroup): model work yields to the daemon (B-12). @default 10 */
export const WORKER_NICE = 10;

/** The variable that sets {@link WORKER_NICE} (0–19); the daemon validates it and sets it for its workers. */
export const WORKER_NICE_ENV = 'AGENTMAIL_PI_WORKER_NICE';

/**
 * The only `AGENTMAIL_*` settings a worker reads from its environment (its log level, pi's retry
 * count); the daemon passes these and nothing else of its own, the key above all (SPEC B-21).
 */
export const WORKER_SETTINGS_ENV: readonly string[] = ['AGENTMAIL_LOG_LEVEL', 'AGENTMAIL_PI_MAX_RETRIES'];
