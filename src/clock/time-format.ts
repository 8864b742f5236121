/** Beijing time: the reference gives every time as ISO 8601 with offset +08:00. */
const OFFSET_MS = 8 * 60 * 60 * 1000;

function beijingParts(ms: number): string[] {
  // Shifting by the offset and reading the UTC fields gives the wall-clock fields in Beijing.
  const iso = new Date(ms + OFFSET_MS).toISOString(); // 2026-11-23T01:30:00.000Z
  return [iso.slice(0, 4), iso.slice(5, 7), iso.slice(8, 10), iso.slice(11, 13), iso.slice(14, 16), iso.slice(17, 19)];
}

/** @see reference "Conventions": Time — ISO 8601 in Beijing time with offset +08:00, whole seconds. */
export function formatTime(ms: number): string {
  const [y, mo, d, h, mi, s] = beijingParts(ms);
  return `${y}-${mo}-${d}T${h}:${mi}:${s}+08:00`;
}

/** The 12-digit time in task ids: yyMMddHHmmss, Beijing time. */
export function compactTime(ms: number): string {
  const [y = '', mo, d, h, mi, s] = beijingParts(ms);
  return `${y.slice(2)}${mo}${d}${h}${mi}${s}`;
}

/** Epoch milliseconds of a time this module formatted (NaN for anything else). */
export function parseTime(text: string): number {
  return Date.parse(text);
}
