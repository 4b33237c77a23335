import { ASK_PERSON_TOOL, MAIL_TOOL_NAMES, mailTools } from '@agentmail/bridge-kit';
import { GatewayClient } from '@agentmail/shared-policy/client';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { readConfig } from '../src/config.js';
import { piMailTools, toTypeBox } from '../src/pi-tools.js';

describe('mail tools as pi tools (SPEC B-17)', () => {
  const client = new GatewayClient({ baseUrl: 'http://127.0.0.1:9', key: 'k' });
  const tools = piMailTools(mailTools(), () => ({ client }));

  it('keeps every name, in order, and runs sends sequentially', () => {
    expect(tools.map((t) => t.name)).toEqual([...MAIL_TOOL_NAMES, ASK_PERSON_TOOL]);
    expect(tools.find((t) => t.name === 'send_mail')?.executionMode).toBe('sequential');
    expect(tools.find((t) => t.name === 'read_mail')?.executionMode).toBeUndefined();
  });

  it('a boolean parameter also takes "true"/"false" strings (ask_person multi_select; the kit reads both)', () => {
    const ask = mailTools().find((t) => t.name === ASK_PERSON_TOOL);
    if (!ask) throw new Error('no ask_person');
    const schema = toTypeBox(ask.parameters);
    for (const multi of [true, 'true'])
      expect(Value.Check(schema, { question: 'q?', multi_select: multi })).toBe(true);
    expect(Value.Check(schema, { question: 'q?', multi_select: 1 })).toBe(false);
    expect(Value.Check(schema, { options: ['a'] })).toBe(false);
  });

  it('builds TypeBox schemas that keep required fields and refuse unknown ones', () => {
    const send = mailTools().find((t) => t.name === 'send_mail');
    if (!send) throw new Error('no send_mail');
    const schema = toTypeBox(send.parameters);
    expect(Value.Check(schema, { to: 'alice', body: 'hi' })).toBe(true);
    expect(Value.Check(schema, { to: 'alice', body: 'hi', attachment_ids: '["a1"]' })).toBe(true);
    expect(Value.Check(schema, { body: 'hi' })).toBe(false);
    expect(Value.Check(schema, { to: 'a', body: 'b', bogus: 1 })).toBe(false);
  });

  it('returns a shared-policy error as an isError result, never a throw', async () => {
    const read = tools.find((t) => t.name === 'read_mail');
    const res = await read?.execute('c1', { mail_id: '' } as never, undefined, undefined, {} as never);
    expect(res?.isError).toBe(true);
    expect(JSON.stringify(res?.content)).toContain('mail_id');
  });
});

describe('readConfig (SPEC §8)', () => {
  const base = { AGENTMAIL_GATEWAY_URL: 'http://127.0.0.1:8787', AGENTMAIL_AGENT_KEY: 'k' };
  it('reads the shared variable names with defaults', () => {
    const c = readConfig({ ...base, AGENTMAIL_REPLY_PROVIDER: 'p', AGENTMAIL_REPLY_MODEL: 'm/x' }, '/w.js');
    expect(c).toMatchObject({
      agentName: 'pi',
      hostDefault: 'p/m/x',
      concurrency: 4,
      turnTimeoutMs: 600_000,
      workerPath: '/w.js',
      workerNice: 10,
    });
    expect(readConfig({ ...base, AGENTMAIL_PI_WORKER_NICE: '0' }, '/w.js').workerNice).toBe(0);
    expect(readConfig({ ...base, AGENTMAIL_PI_WORKER_NICE: '19' }, '/w.js').workerNice).toBe(19);
  });
  it.each(['-1', '20', '5.5', 'low', ' '])(
    'refuses AGENTMAIL_PI_WORKER_NICE=%j, naming it and the range',
    (value) => {
      expect(() => readConfig({ ...base, AGENTMAIL_PI_WORKER_NICE: value }, '/w.js')).toThrow(
        /AGENTMAIL_PI_WORKER_NICE must be a whole number from 0 .* to 19/,
      );
    },
  );
  it('names the bad variable (AM_BRIDGE_CONFIG_INVALID)', () => {
    expect(() => readConfig({ AGENTMAIL_AGENT_KEY: 'k' }, '/w.js')).toThrow(/AGENTMAIL_GATEWAY_URL/);
    expect(() => readConfig({ ...base, AGENTMAIL_CONCURRENCY: '0' }, '/w.js')).toThrow(
      /AGENTMAIL_CONCURRENCY/,
    );
    expect(() => readConfig({ ...base, AGENTMAIL_REPLY_PROVIDER: 'p' }, '/w.js')).toThrow(
      /AGENTMAIL_REPLY_MODEL/,
    );
    let code: unknown;
    try {
      readConfig({ ...base, AGENTMAIL_PI_DATA_DIR: 'rel' }, '/w.js');
    } catch (err) {
      code = (err as { code: string }).code;
    }
    expect(code).toBe('AM_BRIDGE_CONFIG_INVALID');
  });
});
