import { answerMayDeviate, checkHistory, createObserver } from '../observed/index.ts';
import type { CallbackObservation, CheckContext, Deviation, History, Observer, OtherAccount, TaskObservation, TimedExchange } from '../observed/index.ts';
import type { AccountIds } from './account-ids.ts';

/** How much the proxy remembers of what it relays, so that a proxy left running keeps a steady size. */
export interface HistoryMemory {
  /** Accounts (API keys) followed at once; the one seen least recently is forgotten first. */
  accounts: number;
  /**
   * Observations (answers of any endpoint, callbacks) judged together per account: the newest this many at least,
   * twice this many at most.
   */
  observations: number;
}

export const DEFAULT_HISTORY_MEMORY: HistoryMemory = { accounts: 64, observations: 250 };

/** Deviations found more than once are reported once; this many are remembered per account. */
const REPORTED_CAP = 10_000;
/** Tasks whose creating account is remembered (for the isolation rule's evidence); the oldest is forgotten first. */
const CREATORS_CAP = 20_000;

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

/** Every exchange is one answer, every delivery one callback. */
const size = (observer: Observer): number => (observer.history.answers?.length ?? 0) + (observer.history.callbacks?.length ?? 0);
/** What the task, list, text and callback rules read: when it has not grown, only the wire rules have news. */
const read = (observer: Observer): number => {
  const h = observer.history;
  return (h.tasks?.length ?? 0) + (h.pages?.length ?? 0) + (h.texts?.length ?? 0) + (h.callbacks?.length ?? 0);
};

/**
 * The checking proxy's feed of the one checker of observed behaviour (src/observed): a history per account, fed
 * with each exchange and callback the proxy relays and judged again after each. Memory is bounded by keeping two
 * generations per account: when the newest is full it becomes the older and the older is dropped, so the history
 * judged always holds the latest `observations` and each judgment costs at most twice that.
 */
export function createHistories(context: () => CheckContext, memory: HistoryMemory = DEFAULT_HISTORY_MEMORY, ids: AccountIds | null = null): Histories {
  const accounts = new Map<string, Account>();
  /** The account whose key created each task, for what a 404 to another key shows. */
  const creators = new Map<string, string>();

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

  /** The submissions of every followed account known to be another than `id`'s: what its key must never see. */
  const othersOf = (id: string): OtherAccount[] =>
    ids === null
      ? []
      : [...accounts]
          .filter(([other]) => ids.distinct(id, other))
          .map(([other, a]) => ({ account: other, tasks: [a.previous, a.current].flatMap((o) => o?.history.tasks ?? []).filter((t) => t.kind === 'submit') }));

  /** What one task answer shows of the accounts: a creation, or a 404 for a task another key created. */
  const learn = (id: string, obs: TaskObservation | null): void => {
    if (!obs) return;
    const status = obs.answer?.status ?? 200;
    const created = obs.kind === 'submit' && status === 200 ? (obs.task as { id?: unknown } | null)?.id : undefined;
    if (typeof created === 'string') {
      creators.delete(created);
      creators.set(created, id);
      if (creators.size > CREATORS_CAP) creators.delete(creators.keys().next().value as string);
    }
    const creator = obs.target === undefined ? undefined : creators.get(obs.target);
    if ((obs.kind === 'get' || obs.kind === 'cancel') && status === 404 && obs.answer?.code === 'not_found' && creator !== undefined) ids?.apart(id, creator);
  };

  const judge = (id: string, account: Account): Deviation[] => {
    const others = othersOf(id);
    const found = checkHistory({ ...joined(account), ...(others.length > 0 ? { others } : {}) }, context()).filter((d) => {
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
      const before = read(account.current);
      learn(id, account.current.exchange(timed));
      const answer = account.current.history.answers?.at(-1);
      // Nothing a rule may find wrong (a model list, a file): kept as evidence of its key, nothing new to judge.
      return read(account.current) === before && !(answer && answerMayDeviate(answer)) ? [] : judge(id, account);
    },
    callback(id, delivery) {
      const account = accountOf(id);
      account.current.callback(delivery);
      return judge(id, account);
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
    answers: parts.flatMap(([, h]) => h.answers ?? []),
  };
}
