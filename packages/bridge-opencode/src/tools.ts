/**
 * The shared-policy mail tools as opencode plugin tools (see SPEC B-17): same names, parameters
 * and texts; only the host shape changes. Argument schemas are built with `tool.schema` — the zod
 * copy opencode converts with `z.toJSONSchema` — never with our own zod.
 */
import type { JsonSchemaObject, JsonSchemaProperty, MailTool, MailToolContext } from '@agentmail/bridge-kit';
import { type ToolContext, type ToolDefinition, tool } from '@opencode-ai/plugin';

type Zod = typeof tool.schema;
/** Any schema of opencode's zod (its methods are what we use). */
type ZodType = ReturnType<Zod['any']>;

function propertySchema(z: Zod, p: JsonSchemaProperty): ZodType {
  switch (p.type) {
    case 'string':
      return (p.enum && p.enum.length > 0 ? z.enum(p.enum as [string, ...string[]]) : z.string()).describe(
        p.description,
      ) as unknown as ZodType;
    case 'integer': {
      let n = z.number().int();
      if (p.minimum !== undefined) n = n.min(p.minimum);
      if (p.maximum !== undefined) n = n.max(p.maximum);
      return n.describe(p.description) as unknown as ZodType;
    }
    case 'boolean':
      // Models also send "true"/"false" as strings: the kit reads both.
      return z.union([z.boolean(), z.string()]).describe(p.description) as unknown as ZodType;
    case 'array':
      // Models also send a JSON-array string or one comma-separated string (B-16): accept both,
      // shared-policy normalises them.
      return z.union([z.array(z.string()), z.string()]).describe(p.description) as unknown as ZodType;
  }
}

/**
 * The zod raw shape of a mail tool's JSON Schema (required kept, the rest optional).
 * @example toZodShape(mailTools()[0].parameters)
 */
export function toZodShape(schema: JsonSchemaObject, z: Zod = tool.schema): Record<string, ZodType> {
  const shape: Record<string, ZodType> = {};
  for (const [name, p] of Object.entries(schema.properties)) {
    const s = propertySchema(z, p);
    shape[name] = (schema.required.includes(name) ? s : s.optional()) as ZodType;
  }
  return shape;
}

/** Where a tool run gets its shared-policy context: by the opencode session it runs in. */
export type OpencodeToolContextSource = (ctx: ToolContext) => MailToolContext;

/**
 * One opencode tool per mail tool. A failed call is returned as text starting with `Error:` (the
 * shared-policy text names the field or cause and the fix); opencode shows it to the model as the
 * tool's output. The run is aborted with the opencode turn (`ctx.abort`).
 */
export function opencodeMailTools(
  tools: readonly MailTool[],
  context: OpencodeToolContextSource,
): Record<string, ToolDefinition> {
  const out: Record<string, ToolDefinition> = {};
  for (const t of tools) {
    out[t.name] = tool({
      description: t.description,
      args: toZodShape(t.parameters),
      async execute(args, ctx) {
        const result = await t.run(args, { ...context(ctx), signal: ctx.abort });
        return {
          title: t.name,
          output: result.isError ? `Error: ${result.text}` : result.text,
          metadata: { isError: result.isError === true },
        };
      },
    });
  }
  return out;
}
