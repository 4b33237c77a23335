/**
 * An isolated place for one `dsh`: `DSH_HOME` (profiles, sessions, settings, the anonymous user
 * id) and HOME under a root the caller owns, the scripted model as DSH's own OpenAI-compatible
 * `llm-deepseek` route on loopback (every scripted model listed), the title LLM off, retries fast
 * (one retry after 10 ms), and the AgentMail row: by absolute path (`--patch`, the development
 * route) or from the bundle installed in the profile (`dsh plugin add`, the user route).
 *
 * Profiles: `base` is a hand-made profile over `@deepseek-ai/dsh-base` alone (headless-style: no
 * host, no UI answerers) plus DSH's question tool row, which dsh-base lacks; `web` is DSH's
 * shipped web profile (auto-initialized), where the web host owns the approval answerer and the
 * question provider, and model-facing tools live in agent presets.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Which composition the sandbox boots. */
export type DshProfileKind = 'base' | 'web';

/** What {@link createDshSandbox} needs. */
export interface DshSandboxOptions {
  /** Directory that receives `dsh-home/`, `home/`, `tmp/` and the overlay (created). */
  root: string;
  profile: DshProfileKind;
  /** OpenAI-compatible base URL, `http://127.0.0.1:<port>/v1`. */
  modelBaseUrl: string;
  /** Every scripted model id; the first is DSH's default model. */
  modelIds: readonly string[];
  /** The plugin by path (`--patch` row), or undefined when the profile has the bundle installed. */
  pluginJs?: string;
  /**
   * `base` only: the profile's name; a name other than {@link BASE_PROFILE} is left to `dsh plugin
   * --profile <name> add`, which creates the profile (over dsh-base) as a user's first install does.
   * @default BASE_PROFILE (created by hand)
   */
  profileName?: string;
}

/** A ready sandbox. */
export interface DshSandbox {
  /** `DSH_HOME`. */
  home: string;
  /** Profile name for `--profile`. */
  profile: string;
  /** The test overlay (`--patch`). */
  overlay: string;
  /** Variables to set on top of the inherited environment. */
  env: Record<string, string>;
}

/** The base profile's name in `DSH_HOME/profiles`. */
export const BASE_PROFILE = 'mail';

const yaml = (value: unknown): string => JSON.stringify(value);

/** The `system-prompt` persona of each profile, as its bundle patch sets it (dsh 0.1.0-rc.8). */
const PERSONAS: Record<DshProfileKind, string> = {
  base: '',
  web: 'You are a coding agent powered by the {{model}} model. Your working directory is {{cwd}}.',
};

/** The overlay rows: scripted model, no title LLM, fast retries, and (by path) the plugin. */
export function overlayRows(
  options: Pick<DshSandboxOptions, 'profile' | 'modelBaseUrl' | 'modelIds' | 'pluginJs'>,
): string {
  const [first] = options.modelIds;
  if (first === undefined) throw new Error('createDshSandbox: at least one model id');
  const rows = [
    '- id: llm-deepseek',
    `  config: ${yaml({
      apiKeyEnv: 'DEEPSEEK_API_KEY',
      baseURL: options.modelBaseUrl,
      thinking: 'disabled',
      models: options.modelIds.map((id) => ({ id })),
      retryPolicy: {
        mode: 'normal',
        maxRetries: 1,
        backoff: { initialDelayMs: 10, maxDelayMs: 10, jitterRatio: 0 },
      },
    })}`,
    '- id: agent-default-model',
    `  config: ${yaml({ provider: 'deepseek-official', model: first })}`,
    '- id: session-title-llm',
    '  disabled: true',
    // DSH sends its runtime-context snapshot as a user message after the prompt; the scripted
    // model matches a turn by its last user message (the mail's prompt), so the snapshot is off.
    // The row's whole config is restated (an override replaces it): the persona each profile ships.
    '- id: system-prompt',
    `  config: ${yaml({ persona: PERSONAS[options.profile], includeRuntimeContext: false })}`,
  ];
  const inserts: string[] = [];
  if (options.profile === 'base')
    inserts.push(`    - ${yaml({ id: 'tool-ask-user', name: '@deepseek-ai/dsh-tool-ask-user' })}`);
  if (options.pluginJs !== undefined)
    inserts.push(`    - ${yaml({ id: 'agentmail', name: options.pluginJs })}`);
  if (inserts.length > 0) rows.push('- insert:', ...inserts);
  return `${rows.join('\n')}\n`;
}

/** Creates the directories and files; idempotent for the same root (a restart keeps the sessions). */
export function createDshSandbox(options: DshSandboxOptions): DshSandbox {
  const home = join(options.root, 'dsh-home');
  const dirs = { home, userHome: join(options.root, 'home'), tmp: join(options.root, 'tmp') };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  let profile = 'web';
  if (options.profile === 'base' && options.profileName !== undefined && options.profileName !== BASE_PROFILE)
    profile = options.profileName;
  else if (options.profile === 'base') {
    profile = BASE_PROFILE;
    const dir = join(home, 'profiles', profile);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'package.json'),
      `${JSON.stringify({ name: `dsh-profile-${profile}`, private: true, dsh: { profile: { bundles: ['@deepseek-ai/dsh-base'] } } }, null, 2)}\n`,
    );
    writeFileSync(join(dir, 'cordis.patch.yml'), '[]\n');
  }
  const overlay = join(options.root, 'agentmail-test.patch.yml');
  writeFileSync(overlay, overlayRows(options));
  return {
    home,
    profile,
    overlay,
    env: {
      DSH_HOME: home,
      HOME: dirs.userHome,
      TMPDIR: dirs.tmp,
      DEEPSEEK_API_KEY: 'sk-scripted',
      DSH_TELEMETRY_DISABLED: '1',
    },
  };
}
