/**
 * The shared-policy mail tools as DSH tools (SPEC B-17): same names, parameters and texts; only
 * the host shape changes. DSH's parameter DSL marks `required: true` per property (a JSON-Schema
 * `required: [...]` list is rejected at load time) and has no `minimum`/`maximum` (the kit's own
 * argument check enforces them). An array parameter also accepts one string, as models write it
 * (B-16: the kit normalises both).
 */
import type { JsonSchemaProperty, MailTool, MailToolContext } from '@agentmail/bridge-kit';
import { defineTool, type ParameterPropertySpec, type ToolDefinition } from '@deepseek-ai/dsh-tools';
import { detach } from './signals.js';

/** The DSH parameter spec of one mail-tool property. */
export function parameterSpec(p: JsonSchemaProperty, required: boolean): ParameterPropertySpec {
  const req = required ? { required: true as const } : {};
  switch (p.type) {
    case 'string':
      return {
        type: 'string',
        description: p.description,
        ...(p.enum && p.enum.length > 0 ? { enum: [...p.enum] } : {}),
        ...req,
      };
    case 'integer':
      return { type: 'integer', description: p.description, ...req };
    case 'boolean':
      // Models also send "true"/"false" as strings: the kit reads both.
      return { oneOf: [{ type: 'boolean' }, { type: 'string' }], description: p.description, ...req };
    case 'array':
      return {
        oneOf: [{ type: 'array', items: { type: 'string' } }, { type: 'string' }],
        description: p.description,
        ...req,
      };
  }
}

/** Where a tool run gets its shared-policy context: by the DSH agent (session) it runs in. */
export type DshToolContextSource = (agentId: string | undefined) => MailToolContext;

/**
 * One DSH tool per mail tool. A failed call throws the kit's text (it names the field or cause and
 * the fix): DSH turns it into an error result, `Error: <text>`, that the model reads. The run's
 * Gateway calls follow the call's cancellation through a detached signal.
 */
export function dshMailTools(tools: readonly MailTool[], context: DshToolContextSource): ToolDefinition[] {
  return tools.map((t) =>
    defineTool({
      name: t.name,
      description: t.description,
      parameters: Object.fromEntries(
        Object.entries(t.parameters.properties).map(([name, p]) => [
          name,
          parameterSpec(p, t.parameters.required.includes(name)),
        ]),
      ),
      output: {
        schema: {
          type: 'object',
          additionalProperties: false,
          properties: { text: { type: 'string', required: true } },
        },
        render: (_args, value) => [{ type: 'text', text: (value as { text: string }).text }],
      },
      isConcurrencySafe: () => t.annotations.readOnlyHint,
      async execute(args, exec) {
        const signal = detach(exec.signal);
        try {
          const result = await t.run(args, { ...context(exec.agent?.id), signal: signal.signal });
          if (result.isError) throw new Error(result.text);
          return { text: result.text };
        } finally {
          signal.dispose();
        }
      },
    }),
  );
}
