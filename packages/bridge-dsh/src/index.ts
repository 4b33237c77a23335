/**
 * Package entry = the DSH plugin module (`name`, `inject`, `Config`, `apply`), for rows that name
 * `@agentmail/bridge-dsh`. Only the plugin's named exports: DSH's loader reads the module's
 * exports as the plugin (a default export would shadow `inject` and `Config`).
 */
export { apply, Config, inject, name } from './plugin.js';
