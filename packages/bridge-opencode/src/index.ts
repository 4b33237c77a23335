/**
 * Package entry = the opencode plugin module (`"plugin": ["@agentmail/bridge-opencode"]`).
 * opencode calls every export of a plugin module as a plugin, so this module exports only the
 * default (see SPEC §7 opencode); tests import the internals from their own modules.
 */
export { default } from './plugin.js';
