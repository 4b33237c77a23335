import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  DecideRequest,
  decode,
  decodeJson,
  describeJsonType,
  HeartbeatRequest,
  heartbeatUnknownFields,
  InboxQuery,
  MarkReadRequest,
  RegisterRequest,
  SendMailRequest,
} from '../src/index.js';

// SPEC G-10: strict decoding, messages that name the field and the JSON type, list accepted
// fields, give byte offsets of syntax errors, never leak implementation type names.
const IMPLEMENTATION_WORDS = /Zod|zod|ZodObject|\bz\.|Record<|string\[\]|undefined|Array</;

function detail(schema: z.ZodType, input: unknown): string {
  const r = decode(schema, input);
  if (r.ok) throw new Error('expected a decode failure');
  expect(r.error.error).toBe('invalid_request');
  expect(r.error.detail).not.toMatch(IMPLEMENTATION_WORDS);
  return r.error.detail;
}

describe('decode (G-10)', () => {
  it('names the field, the expected JSON type and what arrived', () => {
    const d = detail(HeartbeatRequest, { workspaces: 'x' });
    expect(d).toContain('field "workspaces": expected array of objects, got string');
  });

  it('lists the accepted fields', () => {
    const d = detail(RegisterRequest, { name: 'pi', platform: 'pi', evil: 1 });
    expect(d).toContain('unknown field "evil"');
    expect(d).toContain('Accepted fields: name, platform, version, expire_pending, keep_existing.');
    const r = decode(RegisterRequest, { name: 'pi', platform: 'pi', evil: 1 });
    expect(r.ok || r.error.accepted_fields).toEqual([
      'name',
      'platform',
      'version',
      'expire_pending',
      'keep_existing',
    ]);
    expect(r.ok || r.error.field).toBe('evil');
  });

  it('rejects unknown fields on strict endpoints', () => {
    expect(decode(SendMailRequest, { to: 'a@.', subject: 's', body: 'b', extra: true }).ok).toBe(false);
  });

  it('reports a missing required field as required with its type', () => {
    expect(detail(SendMailRequest, { subject: 's', body: 'b' })).toContain(
      'field "to": required, expected string',
    );
  });

  it('names nested paths and integer types', () => {
    expect(detail(HeartbeatRequest, { sessions: [{ platform_id: 'p', path: 5 }] })).toContain(
      'field "sessions[0].path": expected string, got integer',
    );
    expect(detail(SendMailRequest, { to: 'a@.', subject: 's', body: 'b', max_rounds: 'x' })).toContain(
      'field "max_rounds": expected integer, got string',
    );
  });

  it('describes enums with their values', () => {
    expect(detail(InboxQuery, { status: 'some' })).toContain('expected one of "unread", "all", got "some"');
  });

  it('gives the byte offset of a syntax error, counting UTF-8 bytes', () => {
    const r = decodeJson(RegisterRequest, '{"name":"é", x}');
    expect(r.ok).toBe(false);
    if (!r.ok) {
      // "é" is 2 bytes: the bad token x sits at character 13, byte 14.
      expect(r.error.detail).toMatch(/JSON syntax error at byte offset 14/);
      expect(r.error.detail).toContain(
        'Accepted fields: name, platform, version, expire_pending, keep_existing.',
      );
    }
  });

  it('finds the offset even when Node does not report a position', () => {
    const r = decodeJson(SendMailRequest, '{"to": x}');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.detail).toMatch(/^JSON syntax error at byte offset 7:/);
    const trailing = decodeJson(SendMailRequest, '{"to": "a@.",}');
    expect(trailing.ok).toBe(false);
    if (!trailing.ok) expect(trailing.error.detail).toMatch(/^JSON syntax error at byte offset 13:/);
    const bracket = decodeJson(SendMailRequest, '[1,2');
    expect(bracket.ok).toBe(false);
    if (!bracket.ok) expect(bracket.error.detail).toMatch(/^truncated JSON at byte offset 4:/);
  });

  it('never throws, even on JSON nested deeper than any parser stack', () => {
    const r = decodeJson(MarkReadRequest, '['.repeat(100_000));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.detail).toMatch(/JSON at byte offset \d+/);
  });

  it('says truncated JSON is truncated, with the offset of its end', () => {
    const r = decodeJson(RegisterRequest, '{"name":"pi","platf');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.detail).toMatch(/^truncated JSON at byte offset 19/);
  });

  it('answers an empty body with what is expected', () => {
    for (const raw of ['', '   ']) {
      const r = decodeJson(RegisterRequest, raw);
      expect(r.ok).toBe(false);
      if (!r.ok)
        expect(r.error.detail).toMatch(/^empty body: expected a JSON object\. Accepted fields: name/);
    }
    expect(decode(RegisterRequest, undefined).ok).toBe(false);
  });

  it('passes valid input through with defaults applied', () => {
    const r = decode(InboxQuery, {});
    expect(r).toEqual({ ok: true, value: { status: 'unread', limit: 5 } });
    const q = decode(InboxQuery, { limit: '7', status: 'all' });
    expect(q).toEqual({ ok: true, value: { status: 'all', limit: 7 } });
  });

  it('describes JSON types in words', () => {
    expect(describeJsonType(z.array(z.string()))).toBe('array of strings');
    expect(describeJsonType(z.number().int().optional())).toBe('integer');
    expect(describeJsonType(z.literal('summary'))).toBe('"summary"');
  });

  it('decide needs exactly one of decision or answers', () => {
    expect(decode(DecideRequest, { decision: 'approve' }).ok).toBe(true);
    expect(decode(DecideRequest, { answers: ['A'] }).ok).toBe(true);
    expect(detail(DecideRequest, { decision: 'approve', answers: ['A'] })).toContain('exactly one of');
    expect(detail(DecideRequest, {})).toContain('exactly one of');
  });
});

describe('heartbeat (G-11, G-25)', () => {
  it('decodes leniently and names unknown fields', () => {
    const body = { workspaces: [], future_field: 1, other: 'x' };
    const r = decode(HeartbeatRequest, body);
    expect(r.ok).toBe(true);
    expect(heartbeatUnknownFields(body)).toEqual(['future_field', 'other']);
  });

  it('still checks the types of known fields', () => {
    expect(decode(HeartbeatRequest, { models: 'all' }).ok).toBe(false);
  });

  it('keeps "omitted" apart from "empty"', () => {
    const omitted = decode(HeartbeatRequest, {});
    const empty = decode(HeartbeatRequest, { sessions: [] });
    expect(omitted.ok && omitted.value.sessions).toBeUndefined();
    expect(empty.ok && empty.value.sessions).toEqual([]);
  });

  it('bounds the snapshot sizes (≤200 sessions, ≤300 models)', () => {
    const sessions = Array.from({ length: 201 }, (_, i) => ({ platform_id: `p${i}`, path: '/x' }));
    expect(decode(HeartbeatRequest, { sessions }).ok).toBe(false);
    expect(decode(HeartbeatRequest, { sessions: sessions.slice(0, 200) }).ok).toBe(true);
    const models = Array.from({ length: 301 }, (_, i) => ({ key: `p/m${i}` }));
    expect(decode(HeartbeatRequest, { models }).ok).toBe(false);
  });
});
