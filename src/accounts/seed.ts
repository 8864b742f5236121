import { readFileSync } from 'node:fs';
import type { Random } from '../random/index.ts';
import type { StoreData } from '../store/index.ts';
import { createAccount, createKey } from './accounts.ts';

interface Seed {
  accounts: { id: string; points: string; webhook_url?: string | null; webhook_secret?: string; keys: string[] }[];
}

const SEED_FILE = new URL('../../fixtures/seed.json', import.meta.url);

export function readSeed(): Seed {
  return JSON.parse(readFileSync(SEED_FILE, 'utf8')) as Seed;
}

/** Fills an empty store with the demo account and key of fixtures/seed.json. */
export function seedStore(data: StoreData, random: Random, nowMs: number, seed: Seed = readSeed()): void {
  for (const spec of seed.accounts) {
    const account = createAccount(data, random, nowMs, {
      id: spec.id,
      points: spec.points,
      webhook_url: spec.webhook_url ?? null,
      ...(spec.webhook_secret ? { webhook_secret: spec.webhook_secret } : {}),
    });
    for (const key of spec.keys) createKey(data, random, nowMs, account.id, key);
  }
}

export const isEmpty = (data: StoreData): boolean => Object.keys(data.accounts).length === 0;
