/**
 * The strict check of what the Gateway sends against the endpoint table (`checkResponses`, on in
 * every test): each 2xx JSON answer against its endpoint's response schema, each SSE event
 * against its stream's event schema. Answer schemas strip unknown fields for clients (an older
 * bridge survives a newer Gateway), so the check also refuses fields the schema does not
 * declare: an answer field the contract does not describe is a mismatch as much as a wrong type.
 */
import {
  AGENT_EVENT_SCHEMAS,
  decode,
  type EndpointId,
  PERSON_EVENT_SCHEMAS,
  undeclaredFields,
} from '@agentmail/protocol';
import type { z } from 'zod';
import { GatewayError } from './errors.js';
import type { StreamName } from './event-hub.js';

/** What is wrong with an answer: the JSON path of the first field at fault and a sentence. */
export interface AnswerProblem {
  /** JSON path (`mails[0].status`), '' for the answer itself. */
  field: string;
  detail: string;
}

/** The first problem of `value` against `schema` (type, value, or an undeclared field); none → undefined. */
export function answerProblem(schema: z.ZodType, value: unknown): AnswerProblem | undefined {
  const decoded = decode(schema, value);
  if (!decoded.ok) return { field: decoded.error.field, detail: decoded.error.detail };
  const extra = undeclaredFields(schema, value);
  if (extra.length === 0) return undefined;
  return {
    field: extra[0] ?? '',
    detail: `undeclared field${extra.length > 1 ? 's' : ''} ${extra.map((f) => `"${f}"`).join(', ')}: declare ${extra.length > 1 ? 'them' : 'it'} in the schema of @agentmail/protocol or stop sending ${extra.length > 1 ? 'them' : 'it'}`,
  };
}

/**
 * Check a JSON answer of endpoint `id` as it goes on the wire (the serialised text, so what JSON
 * drops, such as `undefined`, is dropped here too).
 * @throws GatewayError `AM_GW_RESPONSE_INVALID` (500) naming the endpoint and the field; its
 *   `extra` (`endpoint`, `field`) is logged and sent.
 */
export function checkAnswer(id: EndpointId, schema: z.ZodType, text: string | undefined): void {
  const value: unknown = text === undefined ? undefined : JSON.parse(text);
  const problem = answerProblem(schema, value);
  if (problem === undefined) return;
  throw new GatewayError(
    'RESPONSE_INVALID',
    `the answer of endpoint "${id}" breaks its response schema at field "${problem.field}"`,
    {
      detail: problem.detail,
      suggestion: 'a Gateway bug: fix the handler or the schema in @agentmail/protocol',
      extra: { endpoint: id, field: problem.field },
    },
  );
}

/**
 * Check an event before it is stored: its type must be one of its stream's event types (agent
 * streams: `AGENT_EVENT_SCHEMAS`, person streams: `PERSON_EVENT_SCHEMAS`) and its payload must
 * match that schema strictly.
 * @throws GatewayError `AM_GW_RESPONSE_INVALID` (500) naming the endpoint, the event type and the field.
 */
export function checkEvent(stream: StreamName, type: string, payload: unknown): void {
  const [id, schemas]: [EndpointId, Readonly<Record<string, z.ZodType>>] = stream.startsWith('agent:')
    ? ['events', AGENT_EVENT_SCHEMAS]
    : ['meEvents', PERSON_EVENT_SCHEMAS];
  const schema = Object.hasOwn(schemas, type) ? schemas[type] : undefined;
  const problem: AnswerProblem | undefined =
    schema === undefined
      ? { field: '', detail: `unknown event type; known: ${Object.keys(schemas).join(', ')}` }
      : answerProblem(schema, JSON.parse(JSON.stringify(payload)));
  if (problem === undefined) return;
  throw new GatewayError(
    'RESPONSE_INVALID',
    `event "${type}" of endpoint "${id}" breaks its schema at field "${problem.field}"`,
    {
      detail: problem.detail,
      suggestion: 'a Gateway bug: fix the event or the schema in @agentmail/protocol',
      extra: { endpoint: id, event: type, field: problem.field },
    },
  );
}
