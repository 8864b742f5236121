import { checkHistory, createObserver } from '../observed/index.ts';
import type { CallbackObservation, CheckContext, Deviation, History, Observer, TimedExchange } from '../observed/index.ts';

/** How much the proxy remembers of what it relays, so that a proxy left running keeps a steady size. */
export interface HistoryMemory {
  /** Accounts (API keys) followed at once; the one seen least recently is forgotten first. */
  accounts: number;
  /**
   * Observations (task answers, list pages, text calls, callbacks) judged together per account: the newest this
   * many at least, twice this many at most.
   */
  observations: number;
}

export const DEFAULT_HISTORY_MEMORY: HistoryMemory = { accounts: 64, observations: 250 };

/** Deviations found more than once are reported once; this many are remembered per account. */
const REPORTED_CAP = 10_000;

interface Account {
  /** The newest generation, filling up, and the one before it; together the history judged. */
  current: Observer;
  previous: Observer | null;
  generation: number;
  /** `check + message` of every deviation already reported, oldest first. */
  reported: Set<string>;
}

export interface Histories {
  /** Adds one exchange to its account's history and judges it: the deviations not reported before. */
  exchange(account: string, timed: TimedExchange): Deviation[];
  /** Adds one callback delivery to its account's history and judges it: the deviations not reported before. */
  callback(account: string, delivery: CallbackObservation): Deviation[];
}

const size = (observer: Observer): number => {
  const h = observer.history;
  return (h.tasks?.length ?? 0) + (h.pages?.length ?? 0) + (h.texts?.length ?? 0) + (h.callbacks?.length ?? 0);
};

/**
 * The checking proxy's feed of the one checker of observed behaviour (src/observed): a history per account, fed
 * with each exchange and callback the proxy relays and judged again after each. Memory is bounded by keeping two
 * generations per account: when the newest is full it becomes the older and the older is dropped, so the history
 * judged always holds the latest `observations` and each judgment costs at most twice that.
 */
export function createHistories(context: () => CheckContext, memory: HistoryMemory = DEFAULT_HISTORY_MEMORY): Histories {
  const accounts = new Map<string, Account>();

  const accountOf = (id: string): Account => {
    let account = accounts.get(id);
    if (account) {
      // Seen now: the last to be forgotten.
      accounts.delete(id);
    } else {
      account = { current: createObserver(), previous: null, generation: 0, reported: new Set() };
    }
    accounts.set(id, account);
    if (accounts.size > memory.accounts) accounts.delete(accounts.keys().next().value as string);
    return account;
  };

  const judge = (account: Account): Deviation[] => {
    const found = checkHistory(joined(account), context()).filter((d) => {
      const key = `${d.check}\n${d.message}`;
      if (account.reported.has(key)) return false;
      account.reported.add(key);
      if (account.reported.size > REPORTED_CAP) account.reported.delete(account.reported.values().next().value as string);
      return true;
    });
    if (size(account.current) >= memory.observations) {
      account.previous = account.current;
      account.current = createObserver();
      account.generation += 1;
    }
    return found;
  };

  return {
    exchange(id, timed) {
      const account = accountOf(id);
      const before = size(account.current);
      account.current.exchange(timed);
      // Nothing the checker reads (a model list, a file, a refused text call): nothing new to judge.
      return size(account.current) === before ? [] : judge(account);
    },
    callback(id, delivery) {
      const account = accountOf(id);
      account.current.callback(delivery);
      return judge(account);
    },
  };
}

/**
 * The two generations as one history. Each observer names its list walks on its own, so the names are told apart
 * by generation (a walk whose first pages went with the older generation is judged from the pages kept).
 */
function joined(account: Account): History {
  const parts: [number, History][] = [[account.generation, account.current.history]];
  if (account.previous) parts.unshift([account.generation - 1, account.previous.history]);
  return {
    tasks: parts.flatMap(([, h]) => h.tasks ?? []),
    pages: parts.flatMap(([g, h]) => (h.pages ?? []).map((page) => ({ ...page, walk: `${g}/${page.walk}` }))),
    texts: parts.flatMap(([, h]) => h.texts ?? []),
    callbacks: parts.flatMap(([, h]) => h.callbacks ?? []),
  };
}
