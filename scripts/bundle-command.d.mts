// The types of scripts/bundle-command.mjs, for test/support/cli-build.ts.
export const COMMAND_DIR: string;
export const RECIPE: string;
export function moduleFiles(dir: string): string[];
export function bundleCommand(options: { modules: string; dist: string; stage: string; tsconfig?: string }): void;
