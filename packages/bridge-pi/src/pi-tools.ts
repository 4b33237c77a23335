/**
 * The shared-policy mail tools as pi tool definitions (see SPEC B-17): same names, parameters and
 * texts; only the host shape changes. The TypeBox schema is built from the tool's JSON Schema, so
 * pi validates arguments before `execute` and shared-policy validates them again (strictly).
 */
import type { JsonSchemaObject, JsonSchemaProperty, MailTool, MailToolContext } from '@agentmail/bridge-kit';
import type { ToolDefinition } from '@earendil-works/pi-coding-agent';
import { type TSchema, Type } from 'typebox';

function propertySchema(p: JsonSchemaProperty): TSchema {
  const base = { description: p.description };
  switch (p.type) {
    case 'string':
      return p.enum && p.enum.length > 0
        ? Type.Union(
            p.enum.map((v) => Type.Literal(v)),
            base,
          )
        : Type.String(base);
    case 'integer':
      return Type.Integer({
        ...base,
        ...(p.minimum === undefined ? {} : { minimum: p.minimum }),
        ...(p.maximum === undefined ? {} : { maximum: p.maximum }),
      });
    case 'boolean':
      // Models also send "true"/"false" as strings: the kit reads both.
      return Type.Union([Type.Boolean(), Type.String()], base);
    case 'array':
      // Models also send a JSON-array string or one comma-separated string (B-16): accept both,
      // shared-policy normalises them.
      return Type.Union([Type.Array(Type.String()), Type.String()], base);
  }
}

/**
 * TypeBox object schema of a mail tool's JSON Schema (required fields kept, extra fields refused).
 * @example toTypeBox(mailTools()[0].parameters)
 */
export function toTypeBox(schema: JsonSchemaObject): TSchema {
  const props: Record<string, TSchema> = {};
  for (const [name, p] of Object.entries(schema.properties)) {
    const s = propertySchema(p);
    props[name] = schema.required.includes(name) ? s : Type.Optional(s);
  }
  return Type.Object(props, { additionalProperties: false });
}

/** Where a pi tool run gets its shared-policy context (the live client, the current mail …). */
export type MailToolContextSource = (signal: AbortSignal | undefined) => MailToolContext;

/**
 * One pi tool definition per mail tool. Sends (`send_mail`, `forward_mail`) run sequentially so
 * two sends of one assistant message never race (pi runs tool calls in parallel by default).
 * A failed call is returned as `isError: true` with the shared-policy text (never thrown).
 */
export function piMailTools(tools: readonly MailTool[], context: MailToolContextSource): ToolDefinition[] {
  return tools.map(
    (tool): ToolDefinition => ({
      name: tool.name,
      label: tool.name.replaceAll('_', ' '),
      description: tool.description,
      promptSnippet: tool.description.split('. ')[0] ?? tool.description,
      parameters: toTypeBox(tool.parameters),
      annotations: { ...tool.annotations },
      ...(tool.annotations.openWorldHint && !tool.annotations.readOnlyHint
        ? { executionMode: 'sequential' as const }
        : {}),
      async execute(_toolCallId, params, signal) {
        const result = await tool.run(params, context(signal));
        return {
          content: [{ type: 'text', text: result.text }],
          details: JSON.parse(JSON.stringify(result.details ?? null)) as never,
          ...(result.isError ? { isError: true } : {}),
        };
      },
    }),
  );
}
