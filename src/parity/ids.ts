import { ID_VALUE, lastKey, maskOf } from './masks.ts';
import { isPlainObject } from '../contract/index.ts';

/** Path segments that name one resource after these collection names (and any in one of the id forms). */
const COLLECTIONS = new Set(['tasks', 'models', 'files', 'records', 'deliveries']);

/** Method and path template: `GET /v1/tasks/{id}` for `GET /v1/tasks/T261125063931PWGU5G?x=1`. */
export function endpointOf(method: string, path: string): string {
  const segments = (path.split('?')[0] ?? '').split('/');
  const template = segments.map((seg, i) => (seg !== '' && (ID_VALUE.test(seg) || (i > 1 && COLLECTIONS.has(segments[i - 1] ?? ''))) ? '{id}' : seg));
  return `${method.toUpperCase()} ${template.join('/')}`;
}

const escaped = (text: string): string => text.replace(/[.*+?^$()|[\]{}\\]/g, '\\$&');

/**
 * What the recording called one thing and the replay another: task ids from submissions, file ids and file
 * addresses from uploads, any generated id. Later requests are sent with the replay's, and recorded values are
 * read with them.
 */
export class IdMap {
  private readonly map = new Map<string, string>();
  private pattern: RegExp | null = null;

  /** Learns from two answers side by side: string leaves at one path that the ids or files rules mask. */
  learn(recorded: unknown, replayed: unknown): void {
    // A list's items pair by position only: a deployment that holds other tasks shifts them, and a task made before
    // the recording has no counterpart at all. Ids are learned where they are made (a submission, an upload).
    if (isPlainObject(recorded) && recorded['object'] === 'list') return;
    const walk = (path: (string | number)[], rec: unknown, rep: unknown, parent: Record<string, unknown> | undefined): void => {
      if (isPlainObject(rec) && isPlainObject(rep)) {
        for (const key of Object.keys(rec)) if (key in rep) walk([...path, key], rec[key], rep[key], rec);
      } else if (Array.isArray(rec) && Array.isArray(rep)) {
        for (let i = 0; i < Math.min(rec.length, rep.length); i++) walk([...path, i], rec[i], rep[i], undefined);
      } else if (typeof rec === 'string' && typeof rep === 'string' && rec !== rep && rec.length >= 4) {
        const key = lastKey(path);
        // A request id names one answer and never comes back in a request.
        if (key === 'request_id' || rec.startsWith('req_')) return;
        const rule = maskOf({ path, key, parent, recorded: rec, replayed: rep, redacted: false });
        if ((rule === 'ids' || (rule === 'files' && key !== 'size')) && !this.map.has(rec)) {
          this.map.set(rec, rep);
          this.pattern = null;
        }
      }
    };
    walk([], recorded, replayed, undefined);
  }

  /**
   * The text with every recorded id the map knows replaced by its replayed counterpart, in one pass (a replayed
   * id that happens to be another recorded one is left alone) and whole (`file_1` is not a part of `file_12`).
   */
  rewrite(text: string): string {
    if (this.map.size === 0) return text;
    if (this.pattern === null) {
      const ids = [...this.map.keys()].sort((a, b) => b.length - a.length).map(escaped);
      this.pattern = new RegExp(`(?<![A-Za-z0-9_])(${ids.join('|')})(?![A-Za-z0-9_])`, 'g');
    }
    return text.replace(this.pattern, (id) => this.map.get(id) ?? id);
  }

  get size(): number {
    return this.map.size;
  }
}
