/**
 * @agentmail/shared-policy: every platform-independent AgentMail rule. Bridges import it;
 * no bridge copies its logic.
 */
export { AgentMailError, type AgentMailErrorOptions, ERROR_CODES, type ErrorCode, hasErrorCode } from './errors.js';
export {
  catalogue,
  DEFAULT_LOCALE,
  formatText,
  type Locale,
  resolveLocale,
  type TextKey,
  type TextParams,
} from './texts/index.js';
