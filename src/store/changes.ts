import type { StoreData } from './schema.ts';

/**
 * Change tracking for the journal. Domain code changes `store.data` in place, anywhere and at any depth, so
 * instead of asking every caller to report what it touched (and losing data on restart when one forgets), the
 * data is seen through proxies that remember which stored entry each change falls under. A commit then writes
 * only those entries.
 *
 * The unit of change is an entry: `tasks[id]`, `calls[id]`, `ledger[n]`… A change anywhere under an entry marks
 * the whole entry; top-level values (`seq`, `clock_ms`, `scenarios`) are their own entries under the section ''.
 */

/** Top-level sections that map ids to entries. */
export const KEYED_SECTIONS = ['accounts', 'keys', 'tasks', 'idempotency', 'files', 'file_names', 'deliveries', 'calls'] as const;
/** Top-level arrays that only grow; their entries are keyed by index. */
export const LIST_SECTIONS = ['ledger'] as const;
/** The section of top-level values. */
export const TOP = '';

type Section = (typeof KEYED_SECTIONS)[number] | (typeof LIST_SECTIONS)[number];
const sectionNames = new Set<string>([...KEYED_SECTIONS, ...LIST_SECTIONS]);

/** Entries changed since the last `take()`, by section. */
export interface ChangeLog {
  mark(section: string, key: string): void;
  take(): Map<string, Set<string>>;
  readonly size: number;
}

export function createChangeLog(): ChangeLog {
  let changed = new Map<string, Set<string>>();
  let size = 0;
  return {
    mark(section, key) {
      let keys = changed.get(section);
      if (!keys) changed.set(section, (keys = new Set()));
      if (!keys.has(key)) {
        keys.add(key);
        size += 1;
      }
    },
    take() {
      const taken = changed;
      changed = new Map();
      size = 0;
      return taken;
    },
    get size() {
      return size;
    },
  };
}

/** Asked of a proxy, gives the plain object behind it; a plain object has no such key. */
const RAW = Symbol('raw');
const isObject = (value: unknown): value is object => typeof value === 'object' && value !== null;
const rawOf = (value: object): object | undefined => (value as { [RAW]?: object })[RAW];

/**
 * The plain data a `store.data` stands for right now: it changes when the store is replaced (a reset), so work
 * that spans awaits can tell whether the data it started on is still the store's.
 */
export const dataIdentity = (data: StoreData): object => rawOf(data as unknown as object) ?? data;

/** Assignment that keeps `__proto__` an ordinary key (an id or a metadata key) instead of swapping the prototype. */
function assign(target: object, prop: string | symbol, value: unknown): boolean {
  if (prop !== '__proto__') return Reflect.set(target, prop, value, target);
  return Reflect.defineProperty(target, prop, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * The plain value behind a proxy, with proxies nested inside it replaced too: a value built by spreading a
 * stored object (`{ ...task, status }`) carries proxies of that object's children, and those must not end up
 * inside the raw data (they would report changes to the entry they came from).
 */
export function unwrap<T>(value: T): T {
  if (!isObject(value)) return value;
  const raw = rawOf(value);
  if (raw) return raw as T;
  const target = value as Record<string, unknown>;
  for (const key of Object.keys(target)) {
    const child = target[key];
    if (isObject(child)) {
      const unwrapped = unwrap(child);
      if (unwrapped !== child) assign(target, key, unwrapped);
    }
  }
  return value;
}

/**
 * The handler of a proxy of anything under one entry: which entry, and where to report changes. Its traps live
 * on the prototype, so a proxy costs two small objects, made on each read and dropped with it. Proxies are not
 * cached: a scan of a million records would otherwise keep a million proxies alive (so two reads of the same
 * entry give two different objects; compare ids, not objects).
 */
class EntryHandler implements ProxyHandler<object> {
  constructor(
    private readonly log: ChangeLog,
    private readonly section: string,
    private readonly key: string,
  ) {}

  get(target: object, prop: string | symbol): unknown {
    if (prop === RAW) return target;
    const value = Reflect.get(target, prop, target) as unknown;
    return isObject(value) ? new Proxy(value, this) : value;
  }

  set(target: object, prop: string | symbol, value: unknown): boolean {
    this.log.mark(this.section, this.key);
    return assign(target, prop, unwrap(value));
  }

  deleteProperty(target: object, prop: string | symbol): boolean {
    this.log.mark(this.section, this.key);
    return Reflect.deleteProperty(target, prop);
  }

  defineProperty(target: object, prop: string | symbol, descriptor: PropertyDescriptor): boolean {
    this.log.mark(this.section, this.key);
    return Reflect.defineProperty(target, prop, 'value' in descriptor ? { ...descriptor, value: unwrap(descriptor.value) } : descriptor);
  }
}

/** Sees `raw` through proxies that mark changed entries in `log`. `raw()` always gives the current plain data. */
export function trackChanges(
  initial: StoreData,
  log: ChangeLog,
  /** Called after an entry is added to a keyed section (not on a replaced value). */
  onAdd: (section: string, key: string) => void = () => undefined,
): { data: StoreData; raw(): StoreData; reset(next: StoreData): void } {
  let root = initial as unknown as Record<string, unknown>;
  // The target is a stand-in: `reset` swaps the data underneath, so every trap reads `root`.
  const standIn = {};
  let sections = new Map<string, { raw: object; proxy: object }>();

  const within = (section: string, key: string, target: object): object => new Proxy(target, new EntryHandler(log, section, key));

  const sectionProxy = (section: Section, target: object): object => {
    const keyOf = (prop: string | symbol): string | null => (typeof prop === 'string' && !(Array.isArray(target) && prop === 'length') ? prop : null);
    return new Proxy(target, {
      get(t, prop) {
        if (prop === RAW) return t;
        const value = Reflect.get(t, prop, t) as unknown;
        const key = keyOf(prop);
        return isObject(value) && key !== null ? within(section, key, value) : value;
      },
      set(t, prop, value) {
        // An array's length follows its entries; a shortened list is written whole.
        const key = keyOf(prop);
        if (key !== null) log.mark(section, key);
        else if (prop === 'length' && (value as number) < (t as unknown[]).length) log.mark(TOP, section);
        const added = key !== null && !Array.isArray(t) && !Object.hasOwn(t, key);
        const done = assign(t, prop, unwrap(value));
        if (added) onAdd(section, key);
        return done;
      },
      deleteProperty(t, prop) {
        const key = keyOf(prop);
        if (key !== null) log.mark(section, key);
        return Reflect.deleteProperty(t, prop);
      },
    });
  };

  const data = new Proxy(standIn, {
    get(_, prop) {
      if (prop === RAW) return root;
      const value = root[prop as string];
      if (typeof prop !== 'string' || !isObject(value)) return value;
      if (sectionNames.has(prop)) {
        let known = sections.get(prop);
        if (known?.raw !== value) sections.set(prop, (known = { raw: value, proxy: sectionProxy(prop as Section, value) }));
        return known.proxy;
      }
      return within(TOP, prop, value);
    },
    set(_, prop, value) {
      if (typeof prop === 'string') log.mark(TOP, prop);
      root[prop as string] = unwrap(value);
      return true;
    },
    has: (_, prop) => prop in root,
    ownKeys: () => Reflect.ownKeys(root),
    getOwnPropertyDescriptor(_, prop) {
      const descriptor = Reflect.getOwnPropertyDescriptor(root, prop);
      return descriptor ? { ...descriptor, configurable: true } : undefined;
    },
  }) as unknown as StoreData;

  return {
    data,
    raw: () => root as unknown as StoreData,
    reset(next) {
      root = unwrap(next) as unknown as Record<string, unknown>;
      sections = new Map();
    },
  };
}
