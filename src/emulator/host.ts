import { START_DEFAULTS } from '../defaults/index.ts';
import { createContract } from '../contract/index.ts';
import type { Contract } from '../contract/index.ts';
import { createDashboardSignIns } from '../http/index.ts';
import type { AppConfig, DashboardSignIns } from '../http/index.ts';
import { startupSteps } from '../log/index.ts';
import type { Logger, Step } from '../log/index.ts';
import { loadTextModels } from '../models/index.ts';
import type { TextModel } from '../models/index.ts';
import { loadScenarioLibrary } from '../scenarios/index.ts';
import type { ScenarioLibrary } from '../scenarios/index.ts';
import { createSender, resolveWithDns } from '../webhooks/index.ts';
import type { ResolveHost, Send } from '../webhooks/index.ts';
import { VERSION } from '../version.ts';
import type { EmulatorOptions } from './types.ts';

/** The settings every world of one emulator shares: all of AppConfig but the admin tokens, which are each world's. */
export type SharedConfig = Omit<AppConfig, 'adminTokens'>;

/**
 * What the worlds of one emulator share (the default one and every session): the options it was built with,
 * resolved once; the contract and its compiled validators; the scenario library; where lines go; how callbacks
 * leave. Built once per process, before any store opens.
 */
export interface Host {
  options: EmulatorOptions;
  contract: Contract;
  library: ScenarioLibrary;
  textModels: TextModel[];
  config: Readonly<SharedConfig>;
  /** Unexpected errors. */
  log: (message: string) => void;
  warn: (message: string) => void;
  step: Step;
  logger: Logger | null;
  send: Send;
  resolveHost: ResolveHost;
  /** The dashboard's sign-ins, kept while the emulator runs (a link opened in a new tab needs no token). */
  signIns: DashboardSignIns;
  /** Called once `listen` has bound: the public URL follows it unless one was given. */
  listening(url: string): void;
}

export function createHost(options: EmulatorOptions): Host {
  const logger = options.logger ?? null;
  const log = options.log ?? (logger ? (message: string) => logger.error(message) : (message: string) => console.error(message));
  const warn = logger ? (message: string) => logger.warn(message) : log;
  // The scenarios first: a bad file stops the start before a big store is opened or imported.
  const contract = createContract();
  const library = loadScenarioLibrary(contract, options.scenariosDir);
  for (const { name, file } of library.replaced) warn(`scenario '${name}' from ${file} replaces the built-in one`);
  // The address `listen` binds, once it has (unless one was given): the one setting learned later.
  let listeningAt: string | null = null;
  const allowInsecureWebhooks = options.allowInsecureWebhooks ?? false;
  // Read-only from here on: every part of every world reads the same values for the emulator's whole life.
  const config: Readonly<SharedConfig> = Object.freeze({
    allowInsecureWebhooks,
    bodyLimit: options.bodyLimit ?? START_DEFAULTS.bodyLimit,
    textBodyLimit: options.textBodyLimit ?? START_DEFAULTS.maxTextBodyBytes,
    version: VERSION,
    get publicUrl(): string {
      return options.publicUrl ?? listeningAt ?? `http://${START_DEFAULTS.host}:${START_DEFAULTS.port}`;
    },
    fileRetentionMs: (options.fileRetentionSeconds ?? START_DEFAULTS.fileRetentionHours * 3600) * 1000,
    recordContent: options.recordContent ?? false,
    allowedHosts: options.allowedHosts ?? [],
  });
  return {
    options,
    contract,
    library,
    textModels: loadTextModels(),
    config,
    log,
    warn,
    step: startupSteps(logger ? (message) => logger.info(message) : null),
    logger,
    send: options.send ?? createSender(allowInsecureWebhooks),
    resolveHost: options.resolveHost ?? resolveWithDns,
    signIns: createDashboardSignIns(),
    listening: (url) => {
      listeningAt = url;
    },
  };
}
