import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * Makes a folder for recordings or imported files and checks it can be written, one level at a time: node's
 * recursive mkdir never returns under /proc (it retries ENOENT there forever), and a plain one says what failed.
 * Throws the filesystem's error (ENOTDIR, EACCES, ENOENT...) for the caller to say in one line.
 */
export function ensureFolder(path: string): void {
  const missing: string[] = [];
  let at = resolve(path);
  while (!existsSync(at)) {
    missing.unshift(at);
    const parent = dirname(at);
    if (parent === at) break;
    at = parent;
  }
  for (const folder of missing) mkdirSync(folder);
  accessSync(path, constants.W_OK);
}
