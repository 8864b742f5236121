import { createEmulator } from '../emulator.ts';
import { createLogger } from '../log/index.ts';
import { VERSION } from '../version.ts';
import type { StartOptions } from './start-options.ts';

/** `svc-emulator start`: listens, prints where and with which demo key, and shuts down cleanly on a signal. */
export async function start(options: StartOptions): Promise<void> {
  // Log times come from the emulator's clock (its wall time), which exists once the emulator does.
  let wallNow = (): number => 0;
  const logger = createLogger({ level: options.logLevel, format: options.logFormat, now: () => wallNow() });
  const emulator = await createEmulator({ ...options, logger });
  wallNow = () => emulator.clock.wallNow();
  const url = await emulator.listen(options.port, options.host);
  const demo = Object.values(emulator.store.data.keys).filter((k) => k.account_id === 'acct_demo');
  const account = emulator.store.data.accounts['acct_demo'];
  const lines = [
    `svc-emulator ${VERSION} listening on ${url}`,
    `  store        ${emulator.store.kind === 'file' ? emulator.store.path : 'memory'}`,
    `  clock        ${emulator.clock.mode}${emulator.clock.speed !== 1 ? ` ×${emulator.clock.speed}` : ''}`,
    ...(account ? [`  demo account ${account.id} (${account.available} points available)`] : []),
    ...demo.map((k) => `  demo key     ${k.key}`),
    `  admin token  ${emulator.adminToken}`,
    `  try          curl -H "Authorization: Bearer ${demo[0]?.key ?? '<key>'}" ${url}/v1/tasks`,
  ];
  console.log(lines.join('\n'));

  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) return;
    closing = true;
    console.log(`svc-emulator: ${signal}, closing`);
    emulator.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}
