import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  API_PREFIX,
  acceptedFields,
  ENDPOINT_IDS,
  ENDPOINTS,
  endpoint,
  InboxResponse,
  MarkReadResponse,
  pathParamNames,
  routePath,
  SendMailResponse,
  undeclaredFields,
} from '../src/index.js';

describe('the endpoint table (SPEC §3)', () => {
  it('one id per method and path', () => {
    const keys = ENDPOINT_IDS.map((id) => `${endpoint(id).method} ${endpoint(id).path}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('every path parameter has a schema field and nothing else', () => {
    const bad = ENDPOINT_IDS.flatMap((id) => {
      const e = endpoint(id);
      const names = pathParamNames(e.path).sort();
      const declared = e.params ? acceptedFields(e.params).sort() : [];
      return JSON.stringify(names) === JSON.stringify(declared)
        ? []
        : [`${id}: path ${names} ≠ params ${declared}`];
    });
    expect(bad).toEqual([]);
  });

  it('API routes live under the prefix; only the health check outside it', () => {
    const outside = ENDPOINT_IDS.filter((id) => !endpoint(id).path.startsWith(`${API_PREFIX}/`));
    expect(outside).toEqual(['healthz']);
  });

  it('JSON endpoints declare an answer, streams their events, downloads neither', () => {
    for (const id of ENDPOINT_IDS) {
      const e = endpoint(id) as unknown as Record<string, unknown>;
      const transport = e.transport as string;
      if (transport === 'json' || transport === 'multipart') expect(e.response, id).toBeInstanceOf(z.ZodType);
      if (transport === 'sse') expect(Object.keys(e.events as object).length, id).toBeGreaterThan(0);
      if (transport === 'bytes') expect([e.response, e.events], id).toEqual([undefined, undefined]);
    }
  });

  it('routePath fills and encodes parameters; the health check keeps its own path', () => {
    expect(routePath('thread', { id: 'a/b' })).toBe('/api/v1/agent/mail/a%2Fb/thread');
    expect(routePath('adminAllowedModels', { platform: 'pi' })).toBe('/api/v1/admin/platforms/pi/models');
    expect(routePath('healthz')).toBe('/healthz');
    expect(() => routePath('meDecide')).toThrow(/routePath\(meDecide\): missing parameter "id"/);
    expect(ENDPOINTS.adminUsers.method).toBe('GET');
    expect(ENDPOINTS.adminCreateUser.path).toBe(ENDPOINTS.adminUsers.path);
  });
});

describe('undeclaredFields (strict answer check)', () => {
  it('names fields the schema does not declare, by JSON path, through arrays and unions', () => {
    expect(undeclaredFields(MarkReadResponse, { updated: 1 })).toEqual([]);
    expect(undeclaredFields(MarkReadResponse, { updated: 1, extra: true })).toEqual(['extra']);
    expect(
      undeclaredFields(SendMailResponse, { status: 'duplicate_relay', mail_id: 'm1', rounds_left: 3 }),
    ).toEqual(['rounds_left']);
    expect(
      undeclaredFields(InboxResponse, {
        mails: [{ id: 'm1', html: '<b>' }],
        unread_count: 0,
        has_more: false,
      }),
    ).toEqual(['mails[0].html']);
  });

  it('loose objects and records take any field', () => {
    const loose = z.looseObject({ status: z.string() });
    expect(undeclaredFields(loose, { status: 'ok', version: '1' })).toEqual([]);
    expect(undeclaredFields(z.record(z.string(), z.number()), { a: 1, b: 2 })).toEqual([]);
  });
});
