import { describe, expect, it } from 'vitest';
import { EN, type TextKey } from '../src/texts/en.js';
import { catalogue, DEFAULT_LOCALE, formatText, resolveLocale } from '../src/texts/index.js';
import { ZH_CN } from '../src/texts/zh-cn.js';

function placeholders(text: string): string[] {
  return [...new Set([...text.matchAll(/\{([a-zA-Z0-9_]+)\}/g)].map((m) => m[1] ?? ''))].sort();
}

describe('text catalogue', () => {
  const enKeys = Object.keys(EN).sort();
  const zhKeys = Object.keys(ZH_CN).sort();

  it('every EN key exists in ZH_CN', () => {
    expect(enKeys.filter((key) => !Object.hasOwn(ZH_CN, key))).toEqual([]);
  });

  it('every ZH_CN key exists in EN', () => {
    expect(zhKeys.filter((key) => !Object.hasOwn(EN, key))).toEqual([]);
  });

  it('has no empty text', () => {
    for (const [locale, texts] of [
      ['en', EN],
      ['zh-CN', ZH_CN],
    ] as const)
      for (const [key, text] of Object.entries(texts)) expect(text.trim(), `${locale} ${key}`).not.toBe('');
  });

  it('uses the same placeholders per key in both locales', () => {
    const mismatches = enKeys
      .map((key) => ({
        key,
        en: placeholders(EN[key as TextKey]),
        zh: placeholders(ZH_CN[key as TextKey] ?? ''),
      }))
      .filter(({ en, zh }) => en.join(',') !== zh.join(','));
    expect(mismatches).toEqual([]);
  });

  it('catalogue() returns each locale', () => {
    expect(catalogue('en')).toBe(EN);
    expect(catalogue('zh-CN')).toBe(ZH_CN);
    expect(catalogue('zh-CN')['common.language']).toBe('简体中文');
  });
});

describe('formatText', () => {
  it('fills placeholders', () => {
    expect(formatText('prompt.field.subject', { subject: 'Fix tests' })).toBe('Subject: Fix tests');
    expect(formatText('prompt.field.subject', { subject: 'Fix tests' }, 'zh-CN')).toBe('主题：Fix tests');
    expect(formatText('prompt.field.mail_id', { mail_id: 42 })).toBe('Mail id: 42');
  });

  it('fills every occurrence and ignores unused params', () => {
    expect(formatText('prompt.how_to_read', { mail_id: 'm_7', unused: 'x' })).not.toContain('{mail_id}');
    expect(formatText('prompt.how_to_read', { mail_id: 'm_7' })).toContain('m_7');
  });

  it('leaves a placeholder without a value visible', () => {
    expect(formatText('prompt.field.from', { from_name: 'alice' })).toBe(
      'From: alice ({sender_kind}), reply address: {reply_address}',
    );
    expect(formatText('prompt.field.subject')).toBe('Subject: {subject}');
  });

  it('does not interpret "$" patterns or placeholders inside values', () => {
    expect(formatText('prompt.field.subject', { subject: "$& $1 {subject} $'" })).toBe(
      "Subject: $& $1 {subject} $'",
    );
  });

  it('defaults to English', () => {
    expect(DEFAULT_LOCALE).toBe('en');
    expect(formatText('common.language')).toBe('English');
  });
});

describe('resolveLocale', () => {
  it.each([
    ['zh', 'zh-CN'],
    ['zh-CN', 'zh-CN'],
    ['zh_CN', 'zh-CN'],
    ['zh-cn', 'zh-CN'],
    ['ZH-CN', 'zh-CN'],
    ['zh-Hans', 'zh-CN'],
    ['zh-Hans-CN', 'zh-CN'],
    ['zh-SG', 'zh-CN'],
    [' zh_CN.UTF-8 ', 'zh-CN'],
    ['zh-TW', 'en'],
    ['zh-Hant', 'en'],
    ['en', 'en'],
    ['en-US', 'en'],
    ['fr', 'en'],
    ['', 'en'],
    [undefined, 'en'],
    [null, 'en'],
  ] as const)('%j → %s', (tag, locale) => {
    expect(resolveLocale(tag)).toBe(locale);
  });
});
