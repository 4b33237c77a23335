import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { TESTKIT_ERROR_CODES, TestkitError } from './errors.js';
import type { Scenario } from './scenario.js';

// The JSON form of ModelServerOptions, for a server started as a child process. Keys are the
// camelCase names of the TypeScript API (one spelling for both). A RegExp is written as
// `{ "regexp": "...", "flags": "i" }`; predicates and reply functions have no JSON form.
const patternSchema = z
  .union([z.string(), z.strictObject({ regexp: z.string(), flags: z.string().optional() })])
  // Transform after the union: an issue raised inside a union branch is reported as a bare
  // "Invalid input", which would hide the RegExp error.
  .transform((value, ctx) => {
    if (typeof value === 'string') return value;
    try {
      return new RegExp(value.regexp, value.flags);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `invalid RegExp: ${(error as Error).message}` });
      return z.NEVER;
    }
  });

const matchSchema = z.strictObject({
  lastUserMessage: patternSchema.optional(),
  systemPrompt: patternSchema.optional(),
  hasToolResult: z.boolean().optional(),
  toolResultContains: patternSchema.optional(),
  toolOffered: z.string().optional(),
  hasTools: z.boolean().optional(),
  model: patternSchema.optional(),
  headers: z.record(z.string(), patternSchema).optional(),
});

const usageSchema = z.strictObject({
  promptTokens: z.int().nonnegative().optional(),
  completionTokens: z.int().nonnegative().optional(),
});

const replySchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('text'),
    text: z.string(),
    finishReason: z.string().optional(),
    usage: usageSchema.optional(),
  }),
  z.strictObject({
    type: z.literal('tool_calls'),
    calls: z
      .array(
        z.strictObject({
          name: z.string().min(1),
          arguments: z
            .union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())])
            .optional(),
          id: z.string().min(1).optional(),
        }),
      )
      .min(1),
    text: z.string().optional(),
    finishReason: z.string().optional(),
    usage: usageSchema.optional(),
  }),
  z.strictObject({
    type: z.literal('error'),
    status: z.int().min(400).max(599),
    message: z.string().optional(),
    errorType: z.string().optional(),
    code: z.string().optional(),
    headers: z.record(z.string(), z.string()).optional(),
  }),
  z.strictObject({ type: z.literal('hang'), text: z.string().optional() }),
  z.strictObject({ type: z.literal('no_finish_reason'), text: z.string(), done: z.boolean().optional() }),
]);

/** zod schema of a scenario file (see {@link ScenarioFile}). */
export const scenarioFileSchema = z.strictObject({
  models: z.array(z.string().min(1)).min(1).optional(),
  chunkSizeChars: z.int().positive().optional(),
  scenarios: z.array(
    z.strictObject({
      name: z.string().min(1).optional(),
      match: matchSchema.optional(),
      times: z.int().positive().optional(),
      reply: replySchema,
    }),
  ),
});

/** A parsed scenario file: the JSON-expressible part of `ModelServerOptions`. */
export interface ScenarioFile {
  models?: string[];
  chunkSizeChars?: number;
  scenarios: Scenario[];
}

// zod gives `key?: T | undefined`; exactOptionalPropertyTypes wants absent keys instead.
function dropUndefined(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropUndefined);
  if (value === null || typeof value !== 'object' || value instanceof RegExp) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, dropUndefined(v)]),
  );
}

/**
 * Parses the text of a scenario file.
 * @throws {TestkitError} `AM_TESTKIT_SCENARIO_INVALID` naming the bad field (`source` in the message).
 */
export function parseScenarioFile(text: string, source = 'scenario file'): ScenarioFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new TestkitError(
      TESTKIT_ERROR_CODES.SCENARIO_INVALID,
      `${source}: not JSON (${(error as Error).message}); write { "scenarios": [...] }.`,
    );
  }
  const parsed = scenarioFileSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new TestkitError(
      TESTKIT_ERROR_CODES.SCENARIO_INVALID,
      `${source}: ${issues}. See the scenario file format in the @agentmail/testkit README.`,
    );
  }
  return dropUndefined(parsed.data) as ScenarioFile;
}

/**
 * Reads and parses a scenario file.
 * @throws {TestkitError} `AM_TESTKIT_SCENARIO_INVALID` when the file is unreadable or invalid.
 */
export async function loadScenarioFile(path: string): Promise<ScenarioFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new TestkitError(
      TESTKIT_ERROR_CODES.SCENARIO_INVALID,
      `${path}: cannot read (${(error as Error).message}).`,
      {
        cause: error,
      },
    );
  }
  return parseScenarioFile(text, path);
}
