/**
 * Lowering a process's CPU priority so model work yields to the daemon (see SPEC B-12).
 */
import { writeFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { WORKER_NICE } from './constants.js';

/**
 * Lower this process's nice value and, with Linux autogroup scheduling (where a session's CPU share
 * follows its autogroup's nice value, not the process's), its autogroup's too. Best effort:
 * elsewhere, or when not permitted, the default priority stays.
 * @param nice The nice value. @default WORKER_NICE (10)
 */
export function lowerPriority(nice: number = WORKER_NICE): void {
  try {
    setPriority(nice);
  } catch {
    // not permitted: keep the default priority
  }
  try {
    writeFileSync('/proc/self/autogroup', String(nice));
  } catch {
    // no autogroup (not Linux, or disabled): the process nice value above applies
  }
}
