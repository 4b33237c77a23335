/**
 * The single list of test projects. vitest 4 silently ignores a `vitest.workspace.ts`
 * file, so `vitest.config.ts` imports this list into `test.projects`; add a package here
 * and nowhere else.
 */
export const projects: string[] = [
  'packages/protocol',
  'packages/shared-policy',
  'packages/bridge-kit',
  'packages/gateway',
  'packages/testkit',
  'packages/bridge-pi',
  'packages/bridge-opencode',
  'packages/host-tools',
  'packages/bridge-claude',
  'packages/bridge-dsh',
  'packages/bridge-zcode',
  'packages/web',
];
