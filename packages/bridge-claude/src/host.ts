/**
 * This bridge's host descriptor (`host.json` beside package.json, schema `HostDescriptor` in
 * @agentmail/protocol): the one place its platform id and guarded tool names are written (SPEC
 * P-3). Read as plain JSON, no schema at run time (the hook and plugin bundles stay small); the
 * bridge's host test validates it.
 */
import host from '../host.json' with { type: 'json' };

/** The platform id this bridge registers with. */
export const PLATFORM: string = host.platform;
/** The host's guarded tools by its own names (compared ignoring case). */
export const GUARDED_TOOLS: readonly string[] = Object.freeze([...host.guardedTools]);
/** Human name of the host, for texts. */
export const DISPLAY_NAME: string = host.displayName;
/** Why the workspace sandbox cannot wrap this host's tools (SPEC P-12), from host.json. */
export const SANDBOX_UNSUPPORTED: string = host.sandboxUnsupported;
