/**
 * Where the AgentMail checkout is: the Gateway CLI's service files, host descriptors and templates
 * are read from it.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CliError } from './errors.js';

/**
 * The AgentMail checkout this CLI runs from: the nearest ancestor of this module with
 * `deploy/systemd/` and `pnpm-workspace.yaml` (sources, `dist/cli/main.js` and the test builds all
 * live inside it), or `$AGENTMAIL_CHECKOUT`.
 * @throws CliError `AM_CLI_SERVICE_SETUP_FAILED` when none is found.
 */
export function findCheckout(env: NodeJS.ProcessEnv): string {
  const given = env.AGENTMAIL_CHECKOUT;
  let dir = given !== undefined && given !== '' ? given : dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'deploy', 'systemd')) && existsSync(join(dir, 'pnpm-workspace.yaml')))
      return dir;
    const up = dirname(dir);
    if (up === dir)
      throw new CliError('SERVICE_SETUP_FAILED', 'cannot find the AgentMail checkout (deploy/systemd/)', {
        suggestion:
          'run the agentmail of a checkout (node <checkout>/packages/gateway/dist/cli/main.js), or set AGENTMAIL_CHECKOUT',
      });
    dir = up;
  }
}
