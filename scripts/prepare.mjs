// npm's `prepare`: builds dist/ only where npm is preparing this package for another project. npm runs it after
// `npm ci` or `npm install` in a clone (which runs the TypeScript sources: nothing to build), on `npm pack` (where
// `prepack` builds), for `npx svc-emulator` in a clone (bin/svc-emulator.js runs the clone's sources), and when it
// installs this package from git into a project, packing a clone of it in its cache: the one time dist/ is needed.
// INIT_CWD is where the npm command was typed; in the first three it is this package's folder or one inside it.
import { execSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = realpathSync(fileURLToPath(new URL('..', import.meta.url)));
const from = process.env['INIT_CWD'];
let typedHere = false;
try {
  const dir = from === undefined ? null : realpathSync(from);
  typedHere = dir !== null && (dir === here || dir.startsWith(here + sep));
} catch {
  // INIT_CWD is gone: not typed here.
}
if (!typedHere) execSync('npm run build', { stdio: 'inherit', cwd: here });
