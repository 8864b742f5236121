// `npm pack` builds dist/ for the tarball (prepack) and then puts the clone's dist/ back as it was (postpack):
// a clone that had no dist/ has none again, and one that had a build of its own finds that build, untouched.
import { existsSync, renameSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import process from 'node:process';

const KEPT = '.dist-before-pack';
const step = process.argv[2];
if (step === 'before') {
  rmSync(KEPT, { recursive: true, force: true });
  if (existsSync('dist')) renameSync('dist', KEPT);
  try {
    execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  } catch (err) {
    // npm runs no postpack after a failed prepack: put the clone's dist/ back here.
    rmSync('dist', { recursive: true, force: true });
    if (existsSync(KEPT)) renameSync(KEPT, 'dist');
    throw err;
  }
} else if (step === 'after') {
  rmSync('dist', { recursive: true, force: true });
  if (existsSync(KEPT)) renameSync(KEPT, 'dist');
} else {
  throw new Error('usage: node scripts/pack-dist.mjs before|after');
}
