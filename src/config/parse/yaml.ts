// YAML manifests read the way the Kubernetes YAML decoder reads them (YAML 1.1: `0644` is octal,
// `yes` is true), with every cost bounded before it is paid: the values and the flow nesting are
// counted token by token while lexing, the block nesting is measured on the syntax tree before it
// is composed (composing recurses), and what aliases expand to is measured before anything is
// expanded. A file over a limit is refused; nothing large is ever built from it.
import {
  CST,
  Composer,
  Lexer,
  Parser,
  isAlias,
  isMap,
  isNode,
  isPair,
  isScalar,
  isSeq,
  type Alias,
  type Document,
  type Node,
} from 'yaml';
import { LimitError, MAX_ALIASES, MAX_DEPTH, MAX_NODES } from './limits';
import { MANIFEST_YAML_OPTIONS, readSimpleYaml } from './yaml-simple';

export class YamlSyntaxError extends Error {
  override name = 'YamlSyntaxError';
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

/** Token types that start a value. Block mappings have no token of their own; their keys count. */
const VALUE_TOKENS = new Set<string>([
  'scalar',
  'single-quoted-scalar',
  'double-quoted-scalar',
  'block-scalar-header',
  'flow-map-start',
  'flow-seq-start',
  'seq-item-ind',
  'alias',
]);

const tooMany = (): LimitError => new LimitError(`more than ${MAX_NODES} values (the limit for a manifest)`);
const tooDeep = (): LimitError => new LimitError(`nested deeper than ${MAX_DEPTH} levels (the limit for a manifest)`);

/** Lexes and parses to syntax trees, counting values and flow nesting as it goes. */
function syntaxTrees(text: string): CST.Token[] {
  const parser = new Parser();
  const out: CST.Token[] = [];
  let values = 0;
  let aliases = 0;
  let flowDepth = 0;
  for (const lexeme of new Lexer().lex(text)) {
    const type = CST.tokenType(lexeme);
    if (type !== null && VALUE_TOKENS.has(type) && ++values > MAX_NODES) throw tooMany();
    if (type === 'alias' && ++aliases > MAX_ALIASES)
      throw new LimitError(`more than ${MAX_ALIASES} aliases (the limit for a manifest)`);
    if (type === 'flow-map-start' || type === 'flow-seq-start') {
      if (++flowDepth > MAX_DEPTH) throw tooDeep();
    } else if (type === 'flow-map-end' || type === 'flow-seq-end') flowDepth = Math.max(0, flowDepth - 1);
    for (const token of parser.next(lexeme)) out.push(token);
  }
  for (const token of parser.end()) out.push(token);
  return out;
}

/** Nesting depth of a syntax tree, walked without recursion. */
function syntaxDepth(root: CST.Token): number {
  let max = 0;
  const stack: Array<[CST.Token | null | undefined, number]> = [[root, 0]];
  while (stack.length > 0) {
    const [token, depth] = stack.pop()!;
    if (!token) continue;
    if (depth > max) max = depth;
    if (max > MAX_DEPTH) return max;
    switch (token.type) {
      case 'document':
        stack.push([token.value, depth]);
        break;
      case 'block-map':
      case 'block-seq':
      case 'flow-collection':
        for (const item of token.items) {
          if ('key' in item) stack.push([item.key, depth + 1]);
          stack.push([item.value, depth + 1]);
        }
        break;
      default:
        break;
    }
  }
  return max;
}

/**
 * Every alias's node, found in one pass in document order (an alias names the latest anchor of that
 * name before it). The library's own lookup walks the document again for each alias.
 */
function aliasTargets(doc: Document.Parsed): Map<Alias, Node> {
  const anchors = new Map<string, Node>();
  const targets = new Map<Alias, Node>();
  const walk = (node: unknown): void => {
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      if (!target) throw new YamlSyntaxError(`unresolved alias *${node.source}`, node.range?.[0] ?? 0);
      targets.set(node, target);
      return;
    }
    if (!isNode(node)) return;
    // Set before the children: an alias inside a node to that node's own anchor is a cycle, found below.
    if (node.anchor) anchors.set(node.anchor, node);
    if (isMap(node)) {
      for (const pair of node.items) {
        walk(pair.key);
        walk(pair.value);
      }
    } else if (isSeq(node)) for (const item of node.items) walk(item);
  };
  walk(doc.contents);
  return targets;
}

/**
 * How many values the document holds once every alias is expanded, stopping as soon as the limit
 * is passed. Sizes of anchored nodes are remembered, so a node aliased many times is measured once.
 */
function expandedSize(doc: Document.Parsed, targets: ReadonlyMap<Alias, Node>): number {
  const sizes = new Map<Node, number>();
  const visiting = new Set<Node>();
  const size = (node: unknown): number => {
    if (isAlias(node)) return size(targets.get(node));
    if (!isMap(node) && !isSeq(node)) return 1;
    const known = sizes.get(node);
    if (known !== undefined) return known;
    if (visiting.has(node))
      throw new YamlSyntaxError('an alias refers to a node that contains it', node.range?.[0] ?? 0);
    visiting.add(node);
    let total = 1;
    for (const item of node.items) {
      total += isPair(item) ? size(item.key) + size(item.value) : size(item);
      if (total > MAX_NODES)
        throw new LimitError(`aliases expand to more than ${MAX_NODES} values (the limit for a manifest)`);
    }
    visiting.delete(node);
    sizes.set(node, total);
    return total;
  };
  return size(doc.contents);
}

/** `<<` as a plain scalar: YAML 1.1's merge key (the composer gives it a symbol of its own). */
function isMergeKey(key: unknown): boolean {
  return isScalar(key) && typeof key.value === 'symbol' && key.value.description === '<<';
}

/**
 * The document as plain data. Each node is converted once, and an alias shares its anchor's value,
 * so the work is bounded by what expandedSize measured (the library converts a merge source again
 * at every use: a 3 KB chain of 100 merges held the event loop for 200 ms). Keys are strings as
 * the library makes them (`1` → "1", null → ""); a collection used as a key is refused, as the
 * Kubernetes YAML-to-JSON conversion refuses it.
 */
function toPlain(doc: Document.Parsed, targets: ReadonlyMap<Alias, Node>): unknown {
  const done = new Map<Node, unknown>();
  const set = (o: Record<string, unknown>, key: string, value: unknown): void => {
    // defineProperty: "__proto__" is an ordinary field name here.
    Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  };
  const plain = (node: unknown): unknown => {
    if (isAlias(node)) return plain(targets.get(node));
    if (isScalar(node)) return node.value;
    if (!isMap(node) && !isSeq(node)) return node ?? null;
    if (done.has(node)) return done.get(node);
    if (isSeq(node)) {
      const list = node.items.map(plain);
      done.set(node, list);
      return list;
    }
    const o: Record<string, unknown> = {};
    for (const pair of node.items) {
      if (isMergeKey(pair.key)) {
        // Merged keys never override one the mapping already has, nor one merged before them.
        const source = isAlias(pair.value) ? targets.get(pair.value) : pair.value;
        const sources = isSeq(source) ? source.items.map((i) => (isAlias(i) ? targets.get(i) : i)) : [source];
        for (const src of sources) {
          if (!isMap(src))
            throw new YamlSyntaxError(
              'merge sources must be mappings or aliases of mappings',
              (pair.value as Node | null)?.range?.[0] ?? 0,
            );
          for (const [k, v] of Object.entries(plain(src) as Record<string, unknown>))
            if (!Object.hasOwn(o, k)) set(o, k, v);
        }
        continue;
      }
      const key = isAlias(pair.key) ? targets.get(pair.key) : pair.key;
      if (!isScalar(key))
        throw new YamlSyntaxError(
          'a mapping key must be a string, a number or a boolean',
          (pair.key as Node | null)?.range?.[0] ?? 0,
        );
      set(o, key.value === null || key.value === undefined ? '' : String(key.value), plain(pair.value));
    }
    done.set(node, o);
    return o;
  };
  return plain(doc.contents);
}

/**
 * Refuses a mapping that names a key twice. The library's own check (uniqueKeys) compares each key
 * with every key before it: 6,000 keys in a 32 KiB file held the event loop for more than a second.
 * Here each mapping's keys go through a set once. Keys are equal as the library judges them: same
 * scalar value and type (`1` and `"1"` differ); merge keys (`<<`) and collection keys are never equal.
 */
function checkUniqueKeys(doc: Document.Parsed): void {
  const seenNodes = new Set<Node>();
  const stack: unknown[] = [doc.contents];
  while (stack.length > 0) {
    const node = stack.pop();
    // An alias's target is checked where it is defined.
    if (!isMap(node) && !isSeq(node)) continue;
    if (seenNodes.has(node)) continue;
    seenNodes.add(node);
    if (isSeq(node)) {
      for (const item of node.items) stack.push(item);
      continue;
    }
    const keys = new Set<string>();
    for (const item of node.items) {
      stack.push(item.key, item.value);
      const key = item.key;
      if (!isScalar(key)) continue;
      const v = key.value;
      // What === can find equal: a merge key's value is a fresh symbol, NaN equals nothing.
      if (typeof v === 'symbol' || (typeof v === 'object' && v !== null) || (typeof v === 'number' && Number.isNaN(v)))
        continue;
      const id = `${typeof v}:${String(v)}`;
      if (keys.has(id)) throw new YamlSyntaxError('duplicate field: field names must be unique', key.range?.[0] ?? 0);
      keys.add(id);
    }
  }
}

function isEmptyDocument(d: Document.Parsed): boolean {
  const c = d.contents;
  return c === null || (isScalar(c) && c.value === null && c.source === '');
}

export type YamlResult = { readonly value: unknown } | { readonly empty: true };

/**
 * Parses exactly one YAML document. Throws YamlSyntaxError (with the offset), or LimitError.
 * A stream with no document (only comments) is `{ empty: true }`.
 */
export function readYaml(text: string): YamlResult {
  // What tools write is read without the library's costs; the rest, and every error, below.
  const simple = readSimpleYaml(text);
  if (simple) return simple;
  const trees = syntaxTrees(text);
  for (const t of trees) {
    if (t.type === 'error') throw new YamlSyntaxError(t.message, t.offset);
    if (syntaxDepth(t) > MAX_DEPTH) throw tooDeep();
  }
  const composer = new Composer({
    ...MANIFEST_YAML_OPTIONS,
    // Checked in linear time by checkUniqueKeys.
    uniqueKeys: false,
  });
  const docs: Document.Parsed[] = [];
  for (const t of trees) for (const d of composer.next(t)) docs.push(d);
  for (const d of composer.end()) docs.push(d);
  // An empty document (a trailing `---`) is not a second manifest.
  const list = docs.filter((d) => d.errors.length > 0 || !isEmptyDocument(d));
  const [first, second] = list;
  if (!first) return { empty: true };
  const err = first.errors[0];
  if (err) {
    const message =
      err.code === 'DUPLICATE_KEY'
        ? 'duplicate field: field names must be unique'
        : err.message.split('\n', 1)[0]!.replace(/ at line \d+, column \d+:?$/, '');
    throw new YamlSyntaxError(message, err.pos[0]);
  }
  if (second)
    throw new YamlSyntaxError(
      'a second YAML document starts here; a manifest file holds exactly one Pod',
      second.range[0],
    );
  checkUniqueKeys(first);
  const targets = aliasTargets(first);
  expandedSize(first, targets);
  return { value: toPlain(first, targets) };
}
