import { describe, expect, it } from 'vitest';
import { explain, pageDetail } from '../src/errors.js';

// SPEC H-2: an error on the page names the fix in the page's words, never an API route, field
// list or rule id.

const http = (status: number, body: Record<string, unknown>) => ({ code: 'AM_GATEWAY_HTTP', status, body });

describe("errors in the page's words", () => {
  it('a field the Gateway names becomes its label; accepted-field lists and rule ids go', () => {
    expect(pageDetail('field "to": no agent or person is named "pi"')).toBe(
      'To: no agent or person is named "pi"',
    );
    expect(
      pageDetail(
        'field "name": must be of the form letters, digits, "_", "-" and "." only. Accepted fields: name, admin.',
      ),
    ).toBe('New person\'s name: must be of the form letters, digits, "_", "-" and "." only.');
    expect(pageDetail('the path is relative (see SPEC G-3)')).toBe('the path is relative');
  });

  it("codes get the page's own sentences", () => {
    expect(explain(http(409, { error: 'conflict', code: 'AM_GW_NO_LONGER_WAITING', detail: 'x' }))).toMatch(
      /^No longer waiting/,
    );
    expect(explain(http(401, { error: 'unauthorized', code: 'AM_GW_UNAUTHENTICATED' }))).toMatch(
      /Sign in again/,
    );
    expect(explain(http(403, { error: 'forbidden', code: 'AM_GW_FORBIDDEN', given: 'agent_key' }))).toMatch(
      /agent key/,
    );
    expect(
      explain(http(500, { error: 'internal', code: 'AM_GW_INTERNAL', detail: 'GET /api/v1/x' })),
    ).not.toContain('/api/');
    expect(explain({ code: 'AM_GATEWAY_NETWORK' })).toMatch(/Cannot reach the Gateway/);
  });
});
