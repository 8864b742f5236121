/** A count with its noun as a person reads it: `1 exchange`, `3 exchanges`, `2 text calls`. */
export const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;
