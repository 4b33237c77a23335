/**
 * Entry of the launcher child process (see SPEC B-12): the kit's launcher
 * (`@agentmail/bridge-kit/child-launcher`, node built-ins only), which forks the worker children
 * on the daemon's request so no `fork()` runs on the loop that reads SSE. An entry of this
 * package so the build puts it next to `worker-main.js` (the daemon's default `launcherPath`).
 */
import '@agentmail/bridge-kit/child-launcher';
