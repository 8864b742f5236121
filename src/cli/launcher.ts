/**
 * Started through npm (`npx svc-emulator …`, `npm start`), a command is npm's child, and a script that stops npm
 * (`kill $!` after `npx svc-emulator start &`) does not reach it: npm forwards no signal, and the command would live
 * on, reparented, holding its port. So it watches its parent and closes as on SIGTERM once npm has gone. Started
 * otherwise (node, a service manager, nohup), it keeps running whatever its parent does.
 */
export function leaveWithLauncher(close: () => void): void {
  if (process.env['npm_command'] === undefined && process.env['npm_lifecycle_event'] === undefined) return;
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    console.log(`svc-emulator: npm (process ${parent}), which started it, has gone`);
    close();
  }, 250);
  watch.unref();
}
