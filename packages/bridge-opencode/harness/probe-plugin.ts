/**
 * A tiny opencode plugin for the harness's own tests (until the bridge's real plugin is loaded):
 * it appends JSON lines to `options.logFile` — `boot` when its server function runs, every bus
 * `event`, every `tool.execute.before` — and can be told to throw in `tool.execute.before` for
 * one tool (`denyTool`, `denyMessage`, only when the arguments contain `denyIfArgsInclude`) or to answer every permission request itself
 * (`permissionReply`, `permissionMessage`) through a v2 client built on the in-process v1 client.
 * opencode runs it from source (Bun); the default export is the only export (every export would
 * be called as a plugin).
 */
import { appendFileSync } from 'node:fs';
import type { Hooks, PluginInput, PluginModule, PluginOptions } from '@opencode-ai/plugin';
import { OpencodeClient as OpencodeClientV2 } from '@opencode-ai/sdk/v2';
import type { Client } from '@opencode-ai/sdk/v2/gen/client';

const probe: PluginModule = {
  id: 'agentmail-probe',
  async server(input: PluginInput, options?: PluginOptions): Promise<Hooks> {
    const logFile = String(options?.logFile ?? '');
    const log = (record: Record<string, unknown>): void => {
      if (logFile !== '') appendFileSync(logFile, `${JSON.stringify({ t: Date.now(), ...record })}\n`);
    };
    log({ kind: 'boot', keys: Object.keys(input), directory: input.directory, worktree: input.worktree });
    // The v1 client's transport (in-process fetch) drives a v2 client: v2 alone has reply+message.
    const v2 = new OpencodeClientV2({ client: (input.client as unknown as { _client: Client })._client });
    return {
      event: async ({ event }) => {
        log({ kind: 'event', event });
        const reply = options?.permissionReply;
        if (event.type === ('permission.asked' as string) && typeof reply === 'string') {
          const id = (event.properties as { id: string }).id;
          const message = options?.permissionMessage;
          const answer = await v2.permission.reply({
            requestID: id,
            reply: reply as 'once' | 'always' | 'reject',
            ...(typeof message === 'string' ? { message } : {}),
          });
          log({
            kind: 'permission-reply',
            id,
            reply,
            ok: answer.error === undefined,
            data: answer.data ?? answer.error,
          });
        }
      },
      'tool.execute.before': async (hookInput, output) => {
        log({ kind: 'before', tool: hookInput.tool, callID: hookInput.callID, args: output.args });
        const marker = options?.denyIfArgsInclude;
        const matches = typeof marker !== 'string' || JSON.stringify(output.args).includes(marker);
        if (options?.denyTool === hookInput.tool && matches)
          throw new Error(String(options.denyMessage ?? 'denied'));
      },
    };
  },
};

export default probe;
