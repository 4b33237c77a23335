import { AGENT_EVENT_SCHEMAS, type EventSchemas, PERSON_EVENT_SCHEMAS } from '@agentmail/protocol';
import { describe, expect, it } from 'vitest';
import { decodeSseEvent, type SseFrame, SseFrameDecoder } from '../../src/client/sse-decoder.js';
import { ERROR_CODES } from '../../src/errors.js';

describe('SseFrameDecoder (SPEC B-2)', () => {
  it('frames and comments survive any cut, inside a multi-byte character too', () => {
    const text =
      ': connected\n\nid: 1\nevent: new_mail\ndata: {"s":"修复 🚀"}\n\nid: 2\nevent: x\r\ndata: a\r\ndata: b\r\n\r\n';
    const bytes = new TextEncoder().encode(text);
    for (let cut = 1; cut < bytes.length; cut++) {
      const frames: SseFrame[] = [];
      const comments: string[] = [];
      const d = new SseFrameDecoder({ onFrame: (f) => frames.push(f), onComment: (c) => comments.push(c) });
      d.push(bytes.subarray(0, cut));
      d.push(bytes.subarray(cut));
      expect(frames, `cut at ${cut}`).toEqual([
        { id: '1', event: 'new_mail', data: '{"s":"修复 🚀"}' },
        { id: '2', event: 'x', data: 'a\nb' },
      ]);
      expect(comments).toEqual(['connected']);
    }
  });

  it('an unterminated last frame is never emitted', () => {
    const frames: SseFrame[] = [];
    const d = new SseFrameDecoder({ onFrame: (f) => frames.push(f) });
    d.push('id: 1\ndata: {}\n');
    expect(frames).toEqual([]);
  });
});

describe('decodeSseEvent', () => {
  const decision = {
    relay_key: 'k',
    request_id: 'r1',
    session_id: 's1',
    decision: 'deny',
    answers: [],
    note: '',
    fresh_mails: [],
  };

  it('a known type with valid JSON is a typed event with the given id', () => {
    const r = decodeSseEvent(
      AGENT_EVENT_SCHEMAS,
      { id: '4', event: 'permission_decision', data: JSON.stringify(decision) },
      '4',
    );
    expect(r).toEqual({ ok: true, event: { type: 'permission_decision', id: '4', data: decision } });
  });

  it('unknown type, no type, non-JSON data and a schema break are errors naming the event', () => {
    const code = (frame: SseFrame, schemas: EventSchemas = AGENT_EVENT_SCHEMAS) => {
      const r = decodeSseEvent(schemas, frame, frame.id ?? '');
      return r.ok ? 'ok' : `${r.error.code}: ${r.error.message}`;
    };
    expect(code({ id: '1', event: 'permission_request', data: '{}' })).toBe(
      `${ERROR_CODES.SSE_EVENT_UNKNOWN}: event "1" has unknown type "permission_request"; skipped (known: new_mail, permission_decision)`,
    );
    expect(code({ id: '2', event: undefined, data: '{}' })).toMatch(/unknown type "message"/);
    expect(code({ id: '3', event: 'new_mail', data: '{oops' })).toMatch(
      new RegExp(`^${ERROR_CODES.SSE_EVENT_INVALID}: event new_mail "3": data is not JSON`),
    );
    expect(
      code({ id: '4', event: 'permission_request', data: '{"request_id":"p1"}' }, PERSON_EVENT_SCHEMAS),
    ).toMatch(/breaks the contract: field "agent_name": required, expected string/);
  });
});
