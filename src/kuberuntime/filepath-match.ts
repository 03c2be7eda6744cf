// Go's path/filepath.Match on Unix, which the kubelet's keyring uses for each host label of a
// registry key: `*` (any run of non-`/`), `?` (one character but `/`), `[...]` with `^` for
// negation and `a-z` ranges, `\` escaping the next character. A malformed pattern (Go's
// ErrBadPattern) matches nothing. The pattern is split once into chunks (a star and what follows it
// up to the next star); matching takes each chunk at the first place it fits, as Go does, and never
// goes back to an earlier chunk, so a match costs at most pattern length × name length steps.

/** What an atom is: a code unit (>= 0), any character but `/`, or the index of a class. */
const ANY = -1;
const CLASS_BASE = -2;

interface CharClass {
  readonly negated: boolean;
  /** lo, hi, lo, hi... as code points. */
  readonly ranges: Int32Array;
}

interface Chunk {
  /** Preceded by one or more `*`. */
  readonly star: boolean;
  /** One entry per atom: a code unit to match, ANY, or CLASS_BASE - i for classes[i]. */
  readonly atoms: Int32Array;
  readonly classes: readonly CharClass[];
}

/** A compiled pattern; undefined where Go's Match would answer ErrBadPattern. */
export type FilepathPattern = readonly Chunk[];

const SEPARATOR = 0x2f; // '/'

function codePointAt(s: string, i: number): { cp: number; width: number } {
  const cp = s.codePointAt(i)!;
  return { cp, width: cp > 0xffff ? 2 : 1 };
}

/** One character of a class (`lo` or `hi`), `\` escaping it; undefined when the class cannot go on. */
function classChar(p: string, i: number): { cp: number; next: number } | undefined {
  if (i >= p.length || p[i] === '-' || p[i] === ']') return undefined;
  if (p[i] === '\\') {
    i++;
    if (i >= p.length) return undefined;
  }
  const { cp, width } = codePointAt(p, i);
  // As Go's getEsc: a class character must be followed by something (at least its closing bracket).
  if (i + width >= p.length) return undefined;
  return { cp, next: i + width };
}

function compileChunk(p: string, star: boolean): Chunk | undefined {
  const atoms: number[] = [];
  const classes: CharClass[] = [];
  let i = 0;
  while (i < p.length) {
    const c = p[i]!;
    if (c === '[') {
      i++;
      let negated = false;
      if (p[i] === '^') {
        negated = true;
        i++;
      }
      const ranges: number[] = [];
      for (;;) {
        if (p[i] === ']' && ranges.length > 0) {
          i++;
          break;
        }
        const lo = classChar(p, i);
        if (!lo) return undefined;
        i = lo.next;
        let hi = lo.cp;
        if (p[i] === '-') {
          const h = classChar(p, i + 1);
          if (!h) return undefined;
          hi = h.cp;
          i = h.next;
        }
        ranges.push(lo.cp, hi);
      }
      atoms.push(CLASS_BASE - classes.length);
      classes.push({ negated, ranges: Int32Array.from(ranges) });
    } else if (c === '?') {
      atoms.push(ANY);
      i++;
    } else if (c === '\\') {
      if (i + 1 >= p.length) return undefined;
      atoms.push(p.charCodeAt(i + 1));
      i += 2;
    } else {
      atoms.push(p.charCodeAt(i));
      i++;
    }
  }
  return { star, atoms: Int32Array.from(atoms), classes };
}

/** Splits as Go's scanChunk: leading stars, then up to the next star outside a class (`\` skips one). */
export function compileFilepathPattern(pattern: string): FilepathPattern | undefined {
  const chunks: Chunk[] = [];
  let i = 0;
  while (i < pattern.length) {
    let star = false;
    while (pattern[i] === '*') {
      star = true;
      i++;
    }
    const start = i;
    let inRange = false;
    for (; i < pattern.length; i++) {
      const c = pattern[i];
      if (c === '\\') {
        if (i + 1 < pattern.length) i++;
      } else if (c === '[') inRange = true;
      else if (c === ']') inRange = false;
      else if (c === '*' && !inRange) break;
    }
    const chunk = compileChunk(pattern.slice(start, i), star);
    if (!chunk) return undefined;
    chunks.push(chunk);
  }
  return chunks;
}

function inClass(cls: CharClass, cp: number): boolean {
  const r = cls.ranges;
  for (let k = 0; k < r.length; k += 2) if (r[k]! <= cp && cp <= r[k + 1]!) return !cls.negated;
  return cls.negated;
}

/** Where the chunk's atoms end when they match `name` from `at`, or -1. */
function matchAtoms(chunk: Chunk, name: string, at: number): number {
  const atoms = chunk.atoms;
  let i = at;
  for (let k = 0; k < atoms.length; k++) {
    if (i >= name.length) return -1;
    const a = atoms[k]!;
    if (a >= 0) {
      if (name.charCodeAt(i) !== a) return -1;
      i++;
      continue;
    }
    const { cp, width } = codePointAt(name, i);
    if (a === ANY ? cp === SEPARATOR : !inClass(chunk.classes[CLASS_BASE - a]!, cp)) return -1;
    i += width;
  }
  return i;
}

/** Go's Match(pattern, name) for a compiled pattern. */
export function filepathMatches(pattern: FilepathPattern, name: string): boolean {
  let at = 0;
  for (let c = 0; c < pattern.length; c++) {
    const chunk = pattern[c]!;
    const last = c === pattern.length - 1;
    // A trailing star takes the rest of the name, unless that holds a separator.
    if (chunk.star && chunk.atoms.length === 0) return name.indexOf('/', at) === -1;
    const end = matchAtoms(chunk, name, at);
    // The last chunk must reach the end of the name; an earlier one takes its first fit.
    if (end !== -1 && (end === name.length || !last)) {
      at = end;
      continue;
    }
    if (!chunk.star) return false;
    let found = -1;
    // Each atom takes at least one code unit: no fit can start where fewer are left.
    const lastStart = name.length - chunk.atoms.length;
    for (let skip = at; skip < lastStart && name.charCodeAt(skip) !== SEPARATOR; skip++) {
      const e = matchAtoms(chunk, name, skip + 1);
      if (e === -1 || (last && e !== name.length)) continue;
      found = e;
      break;
    }
    if (found === -1) return false;
    at = found;
  }
  return at === name.length;
}

/** filepath.Match(pattern, name), a malformed pattern matching nothing. */
export function filepathMatch(pattern: string, name: string): boolean {
  const compiled = compileFilepathPattern(pattern);
  return compiled !== undefined && filepathMatches(compiled, name);
}
