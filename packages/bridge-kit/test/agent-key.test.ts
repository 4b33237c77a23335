import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AGENT_KEY_CREDENTIAL,
  dropCredentialVariables,
  readAgentKey,
  readBridgeSettings,
  turnProcessEnv,
} from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'agent-key-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const KEY = 'amk_0123456789abcdefghij_-XYZ';

describe('readAgentKey (SPEC B-21)', () => {
  const keyFile = join(dir, 'key');
  writeFileSync(keyFile, `${KEY}\n`, { mode: 0o600 });
  const credentials = join(dir, 'credentials');
  mkdirSync(credentials);
  writeFileSync(join(credentials, AGENT_KEY_CREDENTIAL), `  ${KEY}-cred \n`);

  it('takes the variable first, then the key file, then systemd credential', () => {
    const all = {
      AGENTMAIL_AGENT_KEY: 'amk_direct',
      AGENTMAIL_AGENT_KEY_FILE: keyFile,
      CREDENTIALS_DIRECTORY: credentials,
    };
    expect(readAgentKey(all)).toBe('amk_direct');
    expect(readAgentKey({ ...all, AGENTMAIL_AGENT_KEY: undefined, AGENTMAIL_AGENT_SECRET: 's' })).toBe('s');
    expect(readAgentKey({ ...all, AGENTMAIL_AGENT_KEY: '' })).toBe(KEY);
    expect(readAgentKey({ CREDENTIALS_DIRECTORY: credentials })).toBe(`${KEY}-cred`);
    expect(readAgentKey({})).toBeUndefined();
  });

  it('a unit with other credentials but not ours has no key (the "not set" message follows)', () => {
    expect(readAgentKey({ CREDENTIALS_DIRECTORY: dir })).toBeUndefined();
    expect(() =>
      readBridgeSettings(
        { AGENTMAIL_GATEWAY_URL: 'http://127.0.0.1:1', CREDENTIALS_DIRECTORY: dir },
        { agentName: 'pi' },
      ),
    ).toThrow('AGENTMAIL_AGENT_KEY is not set: create one with `agentmail agent key pi`');
  });

  it('a key file that is missing or empty is an error naming the variable and the fix', () => {
    const missing = join(dir, 'nope');
    expect(() => readAgentKey({ AGENTMAIL_AGENT_KEY_FILE: missing })).toThrow(
      `AGENTMAIL_AGENT_KEY_FILE names ${missing}, which cannot be read (ENOENT): point it at the file that holds the agent key (mode 0600)`,
    );
    const empty = join(dir, 'empty');
    writeFileSync(empty, '\n');
    expect(() => readAgentKey({ AGENTMAIL_AGENT_KEY_FILE: empty })).toThrow(
      `AGENTMAIL_AGENT_KEY_FILE names ${empty}, which is empty: write the agent key into it (one line)`,
    );
  });

  it('the bridge settings read the key from the file', () => {
    const settings = readBridgeSettings(
      { AGENTMAIL_GATEWAY_URL: 'http://127.0.0.1:1', AGENTMAIL_AGENT_KEY_FILE: keyFile },
      { agentName: 'pi' },
    );
    expect(settings.agentKey).toBe(KEY);
  });
});

describe('turnProcessEnv (SPEC B-21)', () => {
  const base = {
    PATH: '/usr/bin',
    HOME: '/home/me',
    AGENTMAIL_AGENT_KEY: KEY,
    AGENTMAIL_AGENT_SECRET: KEY,
    AGENTMAIL_AGENT_KEY_FILE: '/k',
    AGENTMAIL_TOKEN: 'amt_person',
    AGENTMAIL_GATEWAY_URL: 'http://127.0.0.1:8787',
    AGENTMAIL_LOG_LEVEL: 'debug',
    CREDENTIALS_DIRECTORY: '/run/credentials/x',
    MY_COPY: `key=${KEY}`,
    UNSET: undefined,
  };

  it('keeps the rest, drops AGENTMAIL_*, credentials and any value holding a key; adds extra', () => {
    expect(turnProcessEnv(base, { keep: ['AGENTMAIL_LOG_LEVEL'], extra: { PI_DIR: '/p' } })).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/me',
      AGENTMAIL_LOG_LEVEL: 'debug',
      PI_DIR: '/p',
    });
    expect(turnProcessEnv(base)).toEqual({ PATH: '/usr/bin', HOME: '/home/me' });
  });

  it('refuses to keep or add a credential variable', () => {
    expect(() => turnProcessEnv(base, { keep: ['AGENTMAIL_AGENT_KEY'] })).toThrow(
      "AGENTMAIL_AGENT_KEY carries a credential: it is never passed to a process the model's tools start",
    );
    expect(() => turnProcessEnv(base, { extra: { CREDENTIALS_DIRECTORY: '/x' } })).toThrow(
      /CREDENTIALS_DIRECTORY/,
    );
  });

  it('dropCredentialVariables empties an environment in place of what turnProcessEnv leaves out as credentials', () => {
    const env: NodeJS.ProcessEnv = { ...base };
    const removed = dropCredentialVariables(env);
    expect(removed.sort()).toEqual(
      [
        'AGENTMAIL_AGENT_KEY',
        'AGENTMAIL_AGENT_KEY_FILE',
        'AGENTMAIL_AGENT_SECRET',
        'AGENTMAIL_TOKEN',
        'CREDENTIALS_DIRECTORY',
        'MY_COPY',
      ].sort(),
    );
    expect(env).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/me',
      AGENTMAIL_GATEWAY_URL: 'http://127.0.0.1:8787',
      AGENTMAIL_LOG_LEVEL: 'debug',
      UNSET: undefined,
    });
  });
});
