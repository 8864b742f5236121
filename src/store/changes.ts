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

const rawOf = new WeakMap<object, object>();

interface Owner {
  section: string;
  key: string;
  proxy: object;
}

/** Assignment that keeps `__proto__` an ordinary key (an id or a metadata key) instead of swapping the prototype. */
function assign(target: object, prop: string | symbol, value: unknown): boolean {
  if (prop !== '__proto__') return Reflect.set(target, prop, value, target);
  return Reflect.defineProperty(target, prop, { value, writable: true, enumerable: true, configurable: true });
}
const isObject = (value: unknown): value is object => typeof value === 'object' && value !== null;

/**
 * The plain value behind a proxy, with proxies nested inside it replaced too: a value built by spreading a
 * stored object (`{ ...task, status }`) carries proxies of that object's children, and those must not end up
 * inside the raw data (they would report changes to the entry they came from).
 */
export function unwrap<T>(value: T): T {
  if (!isObject(value)) return value;
  const raw = rawOf.get(value);
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
  // One proxy per plain object and entry, so reading the same thing twice gives the same object (=== holds).
  let proxies = new WeakMap<object, Owner>();
  let sections = new Map<string, object>();

  // Which entry each plain object lies under, and its proxy. One handler serves every proxy (a handler with
  // closures per proxy cost ~300 bytes per stored object reached).
  const ownerOf = (target: object): Owner => proxies.get(target) as Owner;
  const markOwner = (target: object): void => {
    const owner = ownerOf(target);
    log.mark(owner.section, owner.key);
  };
  const handler: ProxyHandler<object> = {
    get(t, prop) {
      const value = Reflect.get(t, prop, t) as unknown;
      if (!isObject(value)) return value;
      const owner = ownerOf(t);
      return within(owner.section, owner.key, value);
    },
    set(t, prop, value) {
      markOwner(t);
      return assign(t, prop, unwrap(value));
    },
    deleteProperty(t, prop) {
      markOwner(t);
      return Reflect.deleteProperty(t, prop);
    },
    defineProperty(t, prop, descriptor) {
      markOwner(t);
      return Reflect.defineProperty(t, prop, 'value' in descriptor ? { ...descriptor, value: unwrap(descriptor.value) } : descriptor);
    },
  };

  const within = (section: string, key: string, target: object): object => {
    const known = proxies.get(target);
    if (known?.section === section && known.key === key) return known.proxy;
    // Reached under another entry (it was moved there): a fresh proxy, owned by the entry it is in now.
    const proxy = new Proxy(target, handler);
    rawOf.set(proxy, target);
    proxies.set(target, { section, key, proxy });
    return proxy;
  };

  const sectionProxy = (section: Section, target: object): object => {
    const keyOf = (prop: string | symbol): string | null => (typeof prop === 'string' && !(Array.isArray(target) && prop === 'length') ? prop : null);
    const proxy = new Proxy(target, {
      get(t, prop) {
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
    rawOf.set(proxy, target);
    return proxy;
  };

  const data = new Proxy(standIn, {
    get(_, prop) {
      const value = root[prop as string];
      if (typeof prop !== 'string' || !isObject(value)) return value;
      if (sectionNames.has(prop)) {
        let proxy = sections.get(prop);
        if (!proxy || rawOf.get(proxy) !== value) sections.set(prop, (proxy = sectionProxy(prop as Section, value)));
        return proxy;
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
      proxies = new WeakMap();
      sections = new Map();
    },
  };
}
