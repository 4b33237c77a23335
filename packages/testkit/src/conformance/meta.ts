/**
 * What a conformance test carries in vitest's `meta` (`conformanceSuite` sets it, the run's
 * summary reporter reads it): the scenario, the host column of the matrix, and why it is skipped.
 */

/** The `meta` of a conformance test. */
export interface ConformanceMeta {
  conformance?: {
    /** Scenario id. */
    scenario: string;
    /** Its place in `CONFORMANCE_SCENARIOS` (the matrix's row order). */
    order: number;
    /** The host column of the matrix (`ConformanceOptions.label`). */
    host: string;
    /** Why it is skipped, when it is. */
    skipped?: string;
  };
}

declare module 'vitest' {
  interface TaskMeta extends ConformanceMeta {}
}
