/**
 * The AgentMail DSH plugin — the module DSH's loader mounts (a Cordis plugin: a row of the
 * profile's composition, or the `dsh.bundle` patch of this package). Named exports `name`,
 * `inject`, `Config`, `apply` and no default export: the loader prefers `.default` and would drop
 * `inject` and `Config` (DSH postmortem 0001).
 *
 * `apply` connects the bridge to the Gateway once DSH's whole tree is loaded, and stops it when the
 * plugin is unloaded (dsh's SIGTERM, HMR, a config change).
 */
import { dropCredentialVariables } from '@agentmail/bridge-kit';
import type { Context } from '@deepseek-ai/cordis';
import type {} from '@deepseek-ai/dsh-agent';
import type {} from '@deepseek-ai/dsh-agent-default-model';
import type {} from '@deepseek-ai/dsh-session';
import { DshBridge } from './bridge.js';
import { type DshPluginOptions, readDshConfig } from './config.js';
import { PLUGIN_NAME } from './constants.js';
import { createLogger, feedDshLog } from './log.js';

export { Config } from './config.js';

/** The plugin's Cordis name. */
export const name = PLUGIN_NAME;

/** Services the plugin waits for (it stays pending until all exist). */
export const inject = ['agents', 'sessions', 'agentDefaultModel', 'tools'];

/**
 * Mount the bridge. A bad setting throws (DSH reports the plugin as failed, naming the setting);
 * everything after that is caught: an unhandled rejection would take the whole dsh process down.
 */
export function apply(ctx: Context, options: DshPluginOptions): void {
  const config = readDshConfig(options, process.env);
  // dsh's tools run in this process or its children: the key is read, now out of its environment (B-21).
  dropCredentialVariables(process.env);
  const log = createLogger();
  const dshBridge = new DshBridge(ctx, config, log);
  feedDshLog(dshBridge.bridge.events, ctx.logger, config.agentName);
  // B-15: the kit's stop aborts the mail turns before dsh's own shutdown disposes their agents
  // (a turn that ended "disposed" first would look like a model failure and send a failure mail).
  const onSignal = (): void => void dshBridge.stop().catch(() => undefined);
  process.prependOnceListener('SIGTERM', onSignal);
  process.prependOnceListener('SIGINT', onSignal);
  ctx.effect(() => {
    void (async () => {
      await ctx.get('loader')?.await();
      await dshBridge.start();
    })().catch((err: unknown) =>
      dshBridge.bridge.emit({ type: 'start_failed', error: String(err), permanent: false, retry_ms: 0 }),
    );
    return async () => {
      process.removeListener('SIGTERM', onSignal);
      process.removeListener('SIGINT', onSignal);
      await dshBridge.stop().catch(() => undefined);
    };
  }, 'agentmail bridge');
}
