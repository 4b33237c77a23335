import { describe, expect, it } from 'vitest';
import { readOpencodeConfig } from '../src/config.js';

const env = {
  AGENTMAIL_GATEWAY_URL: 'http://127.0.0.1:8787',
  AGENTMAIL_AGENT_KEY: 'env-key',
  XDG_DATA_HOME: '/x/data',
};

function errorOf(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    return { code: (err as { code: string }).code, message: (err as Error).message };
  }
  throw new Error('expected a throw');
}

describe('readOpencodeConfig (SPEC §8)', () => {
  it('reads the shared AGENTMAIL_* variables; the data dir follows XDG_DATA_HOME', () => {
    expect(readOpencodeConfig(undefined, env)).toMatchObject({
      gatewayUrl: 'http://127.0.0.1:8787',
      agentKey: 'env-key',
      agentName: 'opencode',
      dataDir: '/x/data/agentmail/opencode',
    });
  });

  it('plugin options win over the environment', () => {
    const c = readOpencodeConfig(
      { agentKey: 'opt-key', agentName: 'oc', turnTimeoutMs: 5000, dataDir: '/d' },
      env,
    );
    expect(c).toMatchObject({ agentKey: 'opt-key', agentName: 'oc', turnTimeoutMs: 5000, dataDir: '/d' });
  });

  it.each([
    [{ gatewayUrl: 'localhost:8787' }, 'AGENTMAIL_GATEWAY_URL'],
    [{ agentKey: '' }, 'agentmail agent key opencode'],
    [{ gatewayKey: 'x' }, 'unknown AgentMail plugin option "gatewayKey"'],
    [{ concurrency: true }, '"concurrency" must be a string or a number'],
    [{ dataDir: 'rel/dir' }, 'must be an absolute path'],
  ])('a bad option is named with its fix (%#)', (options, named) => {
    const e = errorOf(() => readOpencodeConfig(options, env));
    expect(e.code).toBe('AM_BRIDGE_CONFIG_INVALID');
    expect(e.message).toContain(named);
  });
});
