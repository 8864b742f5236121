/**
 * The clock's pending jobs as a binary min-heap ordered by due time, then by scheduling order, so equal times
 * run first-scheduled first. Canceled entries are dropped lazily when they reach the top: with tens of thousands
 * of scheduled task transitions, neither scheduling nor canceling may cost a scan of the queue.
 */
export interface Entry<T> {
  atMs: number;
  seq: number;
  value: T;
  canceled: boolean;
}

export interface DueQueue<T> {
  push(atMs: number, value: T): Entry<T>;
  /** The earliest live entry, without removing it. */
  peek(): Entry<T> | undefined;
  pop(): Entry<T> | undefined;
  readonly size: number;
}

export function createDueQueue<T>(): DueQueue<T> {
  const heap: Entry<T>[] = [];
  let seq = 0;
  const before = (a: Entry<T>, b: Entry<T>): boolean => a.atMs < b.atMs || (a.atMs === b.atMs && a.seq < b.seq);

  function up(i: number): void {
    const entry = heap[i] as Entry<T>;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(entry, heap[parent] as Entry<T>)) break;
      heap[i] = heap[parent] as Entry<T>;
      i = parent;
    }
    heap[i] = entry;
  }

  function down(i: number): void {
    const entry = heap[i] as Entry<T>;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && before(heap[right] as Entry<T>, heap[left] as Entry<T>) ? right : left;
      if (!before(heap[child] as Entry<T>, entry)) break;
      heap[i] = heap[child] as Entry<T>;
      i = child;
    }
    heap[i] = entry;
  }

  function removeTop(): Entry<T> | undefined {
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last) {
      heap[0] = last;
      down(0);
    }
    return top;
  }

  function dropCanceled(): void {
    while (heap[0]?.canceled) removeTop();
  }

  return {
    push(atMs, value) {
      const entry: Entry<T> = { atMs, seq: seq++, value, canceled: false };
      heap.push(entry);
      up(heap.length - 1);
      return entry;
    },
    peek() {
      dropCanceled();
      return heap[0];
    },
    pop() {
      dropCanceled();
      return removeTop();
    },
    get size() {
      return heap.length;
    },
  };
}
