import { AgentMailError } from '@agentmail/shared-policy';
import { describe, expect, it } from 'vitest';
import {
  checkBridgeSettings,
  readBridgeConfig,
  readBridgeSettings,
  withPluginOptions,
} from '../src/index.js';

const base = { AGENTMAIL_GATEWAY_URL: 'http://127.0.0.1:8787/', AGENTMAIL_AGENT_KEY: 'k1' };

function codeAndMessage(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AgentMailError);
    return { code: (err as AgentMailError).code, message: (err as Error).message };
  }
  throw new Error('expected a throw');
}

describe('readBridgeSettings (SPEC §8 naming scheme)', () => {
  it('reads the shared variables with their defaults', () => {
    expect(readBridgeSettings(base, { agentName: 'opencode' })).toEqual({
      gatewayUrl: 'http://127.0.0.1:8787',
      agentName: 'opencode',
      agentKey: 'k1',
      hostDefault: '',
      concurrency: 4,
      turnTimeoutMs: 600_000,
      heartbeatMs: 30_000,
      locale: 'en',
    });
  });

  it('takes every variable, AGENTMAIL_AGENT_SECRET as the key, provider/model as host default', () => {
    const s = readBridgeSettings(
      {
        AGENTMAIL_GATEWAY_URL: 'https://gw.example',
        AGENTMAIL_AGENT_SECRET: 's',
        AGENTMAIL_AGENT_NAME: 'oc2',
        AGENTMAIL_REPLY_PROVIDER: 'deepseek',
        AGENTMAIL_REPLY_MODEL: 'deepseek-chat',
        AGENTMAIL_CONCURRENCY: '2',
        AGENTMAIL_TURN_TIMEOUT_MS: '1500',
        AGENTMAIL_HEARTBEAT_MS: '1700',
        AGENTMAIL_LOCALE: 'zh-CN',
      },
      { agentName: 'opencode' },
    );
    expect(s).toMatchObject({
      agentName: 'oc2',
      agentKey: 's',
      hostDefault: 'deepseek/deepseek-chat',
      concurrency: 2,
      turnTimeoutMs: 1500,
      heartbeatMs: 1700,
      locale: 'zh-CN',
    });
  });

  it.each([
    [{ ...base, AGENTMAIL_GATEWAY_URL: 'ftp://x' }, 'AGENTMAIL_GATEWAY_URL'],
    [
      { ...base, AGENTMAIL_GATEWAY_URL: undefined },
      "AGENTMAIL_GATEWAY_URL is not set: set it to the Gateway's base URL, e.g. `export AGENTMAIL_GATEWAY_URL=http://127.0.0.1:8787`",
    ],
    [{ ...base, AGENTMAIL_GATEWAY_URL: '' }, 'AGENTMAIL_GATEWAY_URL is not set'],
    [
      { ...base, AGENTMAIL_GATEWAY_URL: 'ftp://x' },
      'must be an http(s) URL such as http://127.0.0.1:8787 (got "ftp://x")',
    ],
    [{ ...base, AGENTMAIL_AGENT_KEY: '' }, 'agentmail agent key opencode'],
    [{ ...base, AGENTMAIL_REPLY_PROVIDER: 'p' }, 'AGENTMAIL_REPLY_MODEL'],
    [
      { ...base, AGENTMAIL_TURN_TIMEOUT_MS: '0' },
      'AGENTMAIL_TURN_TIMEOUT_MS must be an integer >= 1000 and <= 2147483647 (got "0")',
    ],
    // Longer than Node's timers hold: the turn would time out at once (a TimeoutOverflowWarning).
    [
      { ...base, AGENTMAIL_TURN_TIMEOUT_MS: '3000000000' },
      'AGENTMAIL_TURN_TIMEOUT_MS must be an integer >= 1000 and <= 2147483647 (got "3000000000")',
    ],
    [{ ...base, AGENTMAIL_HEARTBEAT_MS: '5e3' }, 'AGENTMAIL_HEARTBEAT_MS must be an integer'],
    [
      { ...base, AGENTMAIL_BRIDGE_LOCK_STALE_MS: ' 5000' },
      'AGENTMAIL_BRIDGE_LOCK_STALE_MS must be an integer',
    ],
    [{ ...base, AGENTMAIL_HEARTBEAT_MS: '1' }, 'AGENTMAIL_HEARTBEAT_MS must be an integer >= 1000'],
    [{ ...base, AGENTMAIL_LOCALE: 'fr' }, 'AGENTMAIL_LOCALE'],
    [
      { ...base, AGENTMAIL_GATEWAY_URL: 'http://127.0.0.1:8787/api/v1' },
      "give the Gateway's base URL, e.g. http://127.0.0.1:8787",
    ],
    [{ ...base, AGENTMAIL_AGENT_NAME: 'bad name' }, 'AGENTMAIL_AGENT_NAME'],
    [{ ...base, AGENTMAIL_AGENT_KEY: '   ' }, 'agentmail agent key opencode'],
    [{ ...base, AGENTMAIL_CONCURRENCY: '1.5' }, 'AGENTMAIL_CONCURRENCY'],
  ])('names the bad setting and the fix (%#)', (source, named) => {
    const { code, message } = codeAndMessage(() => readBridgeSettings(source, { agentName: 'opencode' }));
    expect(code).toBe('AM_BRIDGE_CONFIG_INVALID');
    expect(message).toContain(named);
    expect(message).not.toContain('(got "")');
  });

  it('says an empty gatewayUrl built in code is not set, not that it is a bad URL', () => {
    const settings = readBridgeSettings(base, { agentName: 'pi' });
    const { code, message } = codeAndMessage(() => checkBridgeSettings({ ...settings, gatewayUrl: ' ' }));
    expect(code).toBe('AM_BRIDGE_CONFIG_INVALID');
    expect(message).toContain('gatewayUrl (AGENTMAIL_GATEWAY_URL) is not set');
  });
});

describe('AGENTMAIL_QUESTION_TIMEOUT_MS (SPEC P-9)', () => {
  it('is read when given, absent otherwise, and must be an integer >= 1', () => {
    expect(
      readBridgeSettings({ ...base, AGENTMAIL_QUESTION_TIMEOUT_MS: '5000' }, { agentName: 'dsh' }),
    ).toMatchObject({
      questionTimeoutMs: 5000,
    });
    expect(readBridgeSettings(base, { agentName: 'dsh' })).not.toHaveProperty('questionTimeoutMs');
    const e = codeAndMessage(() =>
      readBridgeSettings({ ...base, AGENTMAIL_QUESTION_TIMEOUT_MS: 'soon' }, { agentName: 'dsh' }),
    );
    expect(e).toMatchObject({ code: 'AM_BRIDGE_CONFIG_INVALID' });
    expect(e.message).toContain('AGENTMAIL_QUESTION_TIMEOUT_MS');
  });
});

describe('withPluginOptions (plugin options over the environment)', () => {
  it('maps each option to its variable; options win; dataDir is the platform data-dir variable', () => {
    const source = withPluginOptions(
      'dsh',
      { agentKey: 'opt', turnTimeoutMs: 5000, dataDir: '/d', locale: undefined },
      { ...base, AGENTMAIL_LOCALE: 'zh-CN' },
    );
    expect(source).toMatchObject({
      AGENTMAIL_AGENT_KEY: 'opt',
      AGENTMAIL_TURN_TIMEOUT_MS: '5000',
      AGENTMAIL_DSH_DATA_DIR: '/d',
      AGENTMAIL_LOCALE: 'zh-CN',
    });
    expect(readBridgeConfig('dsh', source, '/home/u')).toMatchObject({ agentKey: 'opt', dataDir: '/d' });
  });

  it.each([
    [{ gatewayKey: 'x' }, 'unknown AgentMail plugin option "gatewayKey": use one of gatewayUrl'],
    [{ concurrency: true }, 'AgentMail plugin option "concurrency" must be a string or a number'],
    [{ agentName: { a: 1 } }, '"agentName" must be a string or a number'],
  ])('a bad option is named (%#)', (options, named) => {
    const e = codeAndMessage(() => withPluginOptions('dsh', options, base));
    expect(e.code).toBe('AM_BRIDGE_CONFIG_INVALID');
    expect(e.message).toContain(named);
  });
});

describe('AGENTMAIL_BRIDGE_LOCK_STALE_MS (SPEC G-22)', () => {
  it('is read when given, absent otherwise, and must be an integer >= 2000 (the holder refreshes at half)', () => {
    expect(
      readBridgeSettings({ ...base, AGENTMAIL_BRIDGE_LOCK_STALE_MS: '6000' }, { agentName: 'pi' }),
    ).toMatchObject({ lockStaleMs: 6000 });
    expect(readBridgeSettings(base, { agentName: 'pi' })).not.toHaveProperty('lockStaleMs');
    const e = codeAndMessage(() =>
      readBridgeSettings({ ...base, AGENTMAIL_BRIDGE_LOCK_STALE_MS: '500' }, { agentName: 'pi' }),
    );
    expect(e).toMatchObject({ code: 'AM_BRIDGE_CONFIG_INVALID' });
    expect(e.message).toContain('AGENTMAIL_BRIDGE_LOCK_STALE_MS must be an integer >= 2000');
  });
});

describe('AGENTMAIL_SANDBOX (SPEC P-12)', () => {
  it('is exactly "workspace" or "off" (absent: off); anything else is refused naming the variable and its values', () => {
    expect(
      readBridgeSettings({ ...base, AGENTMAIL_SANDBOX: 'workspace' }, { agentName: 'pi' }),
    ).toMatchObject({
      sandbox: 'workspace',
    });
    expect(readBridgeSettings(base, { agentName: 'pi' })).not.toHaveProperty('sandbox');
    for (const bad of ['Workspace', 'on', 'full']) {
      const e = codeAndMessage(() =>
        readBridgeSettings({ ...base, AGENTMAIL_SANDBOX: bad }, { agentName: 'pi' }),
      );
      expect(e).toMatchObject({ code: 'AM_BRIDGE_CONFIG_INVALID' });
      expect(e.message).toContain(`AGENTMAIL_SANDBOX must be "workspace"`);
      expect(e.message).toContain(`(got "${bad}")`);
    }
  });
});
