/** Lines `pnpm demo` prints as section headers and at its clean end (the demo test looks for them). */
export const DEMO_SECTIONS = {
  thread: '== The thread, as alice reads it: agentmail thread',
  permission: '== The permission exchange',
  timings: '== Timings',
  clean: 'All processes stopped',
} as const;

/**
 * Environment variable the demo passes to every process it starts, unchanged (the demo test sets
 * it to a unique value and then looks for any process still carrying it).
 */
export const DEMO_TRACE_ENV = 'DEMO_TRACE_TAG';
