// What the source of a match rule's regular expression says before it runs: whether it can backtrack without end
// (refused at load), and the literal text every match of it contains (what the call's text index looks for).

/**
 * Whether a regular expression repeats a group that itself repeats without bound, as `(a+)+` or `(\w*)*` do: on
 * a text that almost fits, such a pattern backtracks for a time exponential in the text's length. A heuristic:
 * it does not see overlapping alternatives (`(a|a)*`).
 */
export function nestedQuantifier(source: string): boolean {
  // One entry per open group: whether an unbounded quantifier appeared inside it.
  const groups: boolean[] = [];
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      i += 1;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(') groups.push(false);
    else if (c === ')') {
      const inner = groups.pop() ?? false;
      const after = unboundedAt(source, i + 1);
      if (inner && after) return true;
      // The group's own repetition (or what repeated inside it) makes its enclosing group repeat too.
      if (groups.length > 0 && (inner || after)) groups[groups.length - 1] = true;
    } else if (groups.length > 0 && unboundedAt(source, i)) groups[groups.length - 1] = true;
  }
  return false;
}

/** Whether an unbounded quantifier (`*`, `+`, `{n,}`) starts at `at`. */
function unboundedAt(source: string, at: number): boolean {
  const c = source[at];
  if (c === '*' || c === '+') return true;
  return c === '{' && /^\{\d+,\}/.test(source.slice(at, at + 12));
}

/**
 * Runs of characters that every match of a regular expression (flags `''` or `i`) contains, as written in its
 * source: the literal characters of its top level, outside groups and classes, not made optional or repeated by a
 * quantifier. Conservative: it may find fewer than there are, never one a match can lack. None for a source with an
 * alternative at its top level (`a|b`).
 */
export function requiredLiterals(source: string): string[] {
  const runs: string[] = [];
  let run = '';
  const cut = (): void => {
    if (run.length > 0) runs.push(run);
    run = '';
  };
  /** Skips while `more` holds from `at`, up to `limit` characters; returns the last index skipped. */
  const skip = (at: number, more: (c: string) => boolean, limit = Infinity): number => {
    let i = at;
    while (i + 1 < source.length && i - at < limit && more(source[i + 1] as string)) i++;
    return i;
  };
  const upTo = (at: number, end: string): number => {
    const found = source.indexOf(end, at + 1);
    return found === -1 ? source.length - 1 : found;
  };
  const hex = (c: string): boolean => /[0-9a-fA-F]/.test(c);
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i] as string;
    if (c === '\\') {
      const next = source[i + 1];
      if (next === undefined) return [];
      i += 1;
      if (depth > 0 || inClass) continue;
      if (!/[A-Za-z0-9]/.test(next) && next >= ' ') {
        // An escaped sign stands for itself: `\.`, `\#`, `\\`.
        run += next;
        continue;
      }
      // A class, an assertion, a back reference or a coded character: no one literal. What it takes is skipped,
      // or more (a literal lost is only a weaker filter).
      cut();
      if (/[0-9]/.test(next)) i = skip(i, (d) => /[0-9]/.test(d));
      else if (next === 'x') i = skip(i, hex, 2);
      else if (next === 'u') i = source[i + 1] === '{' ? upTo(i, '}') : skip(i, hex, 4);
      else if (next === 'c') i = skip(i, (l) => /[A-Za-z]/.test(l), 1);
      else if (next === 'k' && source[i + 1] === '<') i = upTo(i, '>');
      else if ((next === 'p' || next === 'P') && source[i + 1] === '{') i = upTo(i, '}');
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      cut();
      continue;
    }
    if (depth > 0) {
      if (c === '(') depth += 1;
      else if (c === ')') depth -= 1;
      continue;
    }
    if (c === '(') {
      depth = 1;
      cut();
    } else if (c === '|') {
      return [];
    } else if (c === '*' || c === '+' || c === '?' || (c === '{' && /^\{\d+(,\d*)?\}/.test(source.slice(i)))) {
      // The atom before is optional or repeated: the run ends before it. A `{…}` quantifier's digits are not text;
      // a `{` that begins none stands for itself (`a{|` is `a{` or nothing), and ends the run as `}` does.
      run = run.slice(0, -1);
      cut();
      if (c === '{') i = upTo(i, '}');
    } else if (c === '{') {
      cut();
    } else if (c === '.' || c === '^' || c === '$' || c === ')' || c === ']' || c === '}') {
      cut();
    } else {
      run += c;
    }
  }
  cut();
  return runs;
}
