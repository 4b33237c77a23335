import { describe, expect, it } from 'vitest';
import { hasErrorCode } from '../src/errors.js';
import {
  HOST_DEFAULT_LOG_LINE,
  MAX_ALLOWED_MODELS,
  modelAttemptOrder,
  splitModelKey,
} from '../src/model-order.js';

describe('splitModelKey (G-26)', () => {
  it('splits at the first slash', () => {
    expect(splitModelKey('openai/gpt-5')).toEqual({ provider: 'openai', model: 'gpt-5' });
    expect(splitModelKey('openrouter/meta-llama/llama-3.1-70b')).toEqual({
      provider: 'openrouter',
      model: 'meta-llama/llama-3.1-70b',
    });
  });

  it.each(['gpt-5', '/gpt-5', 'openai/', '', '/'])('rejects %j with AM_MODEL_KEY_INVALID', (key) => {
    try {
      splitModelKey(key);
      expect.unreachable('should throw');
    } catch (e) {
      expect(hasErrorCode(e, 'AM_MODEL_KEY_INVALID')).toBe(true);
      expect((e as Error).message).toContain('provider/model');
    }
  });
});

describe('modelAttemptOrder (B-8)', () => {
  it("tries the admin's allowed models in order", () => {
    const r = modelAttemptOrder({ allowed: ['b/2', 'a/1', 'c/x/y'] });
    expect(r.attempts).toEqual([
      { kind: 'configured', key: 'b/2', provider: 'b', model: '2' },
      { kind: 'configured', key: 'a/1', provider: 'a', model: '1' },
      { kind: 'configured', key: 'c/x/y', provider: 'c', model: 'x/y' },
    ]);
    expect(r.usedHostDefault).toBe(false);
    expect(r.skipped).toEqual([]);
    expect(r.logLine).toBeUndefined();
  });

  it('none configured: one attempt with the host default, logged as not chosen by the platform', () => {
    const r = modelAttemptOrder({ allowed: [], catalogue: ['a/1'] });
    expect(r.attempts).toEqual([{ kind: 'host_default' }]);
    expect(r.usedHostDefault).toBe(true);
    expect(r.logLine).toBe(HOST_DEFAULT_LOG_LINE);
    expect(r.logLine).toContain('host default, not chosen by the platform');
    const named = modelAttemptOrder({ allowed: [], hostDefault: 'deepseek/deepseek-chat' });
    expect(named.attempts).toEqual([{ kind: 'host_default', provider: 'deepseek', model: 'deepseek-chat' }]);
    expect(named.logLine).toContain('deepseek/deepseek-chat');
  });

  it('a model missing from a known catalogue is skipped at once', () => {
    const r = modelAttemptOrder({ allowed: ['a/1', 'gone/old', 'b/2'], catalogue: ['a/1', 'b/2', 'c/3'] });
    expect(r.attempts.map((a) => a.kind === 'configured' && a.key)).toEqual(['a/1', 'b/2']);
    expect(r.skipped).toEqual([{ key: 'gone/old', reason: 'not_in_catalogue' }]);
    expect(r.logLine).toContain('gone/old (not_in_catalogue)');
  });

  it('an unknown catalogue (undefined) skips nothing; an empty one skips everything', () => {
    expect(modelAttemptOrder({ allowed: ['a/1'], catalogue: undefined }).attempts).toHaveLength(1);
    const empty = modelAttemptOrder({ allowed: ['a/1'], catalogue: [] });
    expect(empty.attempts).toEqual([]);
    expect(empty.usedHostDefault).toBe(false); // never falls back to a model the admin did not choose
    expect(empty.logLine).toContain('no model left to try');
  });

  it('skips malformed keys and duplicates, and keeps at most 10', () => {
    const allowed = ['bad', 'a/1', 'a/1', ...Array.from({ length: 10 }, (_, i) => `p/m${i}`)];
    const r = modelAttemptOrder({ allowed });
    expect(MAX_ALLOWED_MODELS).toBe(10);
    expect(r.attempts.length).toBeLessThanOrEqual(10);
    expect(r.skipped).toEqual(
      expect.arrayContaining([
        { key: 'bad', reason: 'invalid_key' },
        { key: 'a/1', reason: 'duplicate' },
        { key: 'p/m7', reason: 'over_limit' },
      ]),
    );
    expect(r.attempts.map((a) => a.kind === 'configured' && a.key)).toEqual([
      'a/1',
      ...Array.from({ length: 7 }, (_, i) => `p/m${i}`),
    ]);
  });
});
