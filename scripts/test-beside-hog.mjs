// `npm run test:loaded`: `npm test` (the fast suite) beside a process that keeps one core busy (a shared CI runner's
// neighbour), to show the suite's margin: it must pass, and the time it takes is printed. Arguments go to vitest
// (`npm run test:loaded -- --config vitest.slow.config.ts` for the slow suite).
import { spawn } from 'node:child_process';

const hog = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
const started = Date.now();
const run = spawn('npx', ['vitest', 'run', ...process.argv.slice(2)], { stdio: 'inherit' });
run.on('exit', (code) => {
  hog.kill('SIGKILL');
  console.log(`npm test beside a CPU hog: exit ${code}, ${((Date.now() - started) / 1000).toFixed(0)} s`);
  process.exit(code ?? 1);
});
