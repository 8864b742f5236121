// The types of scripts/bundle-command.mjs, for test/support/cli-build.ts.
export const RECIPE: string;
export function bundleCommand(options: { modules: string; dist: string; stage: string; tsconfig?: string }): void;
