// Lets `npm start` and `npm test` work on a fresh clone: installs from the lockfile once, when nothing is installed.
import { existsSync } from 'node:fs';
import { execSync } from 'node:child_process';

if (!existsSync(new URL('../node_modules/.package-lock.json', import.meta.url))) {
  console.error('svc-emulator: installing dependencies from package-lock.json (first run only)…');
  execSync('npm ci --no-audit --no-fund', { stdio: 'inherit', cwd: new URL('..', import.meta.url) });
}
