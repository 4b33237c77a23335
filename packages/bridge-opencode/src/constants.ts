/** Version string sent to the Gateway. */
export const BRIDGE_VERSION = 'agentmail-opencode/0.1.0';
/** Key of the process-wide bridge on `globalThis` (every opencode instance shares it). */
export const BRIDGE_GLOBAL_KEY = Symbol.for('agentmail.bridge-opencode');

/**
 * opencode's own question tool (serve mode only, research notes opencode.md): its answer comes
 * from opencode's UI and its reject carries no message, so a mail turn switches it off (SPEC P-9)
 * and the model asks with the kit's `ask_person` (P-10).
 */
export const OPENCODE_QUESTION_TOOL = 'question';
