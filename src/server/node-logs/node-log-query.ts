// The node log query of KEP-2258 (pkg/kubelet/kubelet_server_journal.go): which services or file a
// /logs/ request asks for and with which options, read from the query as the kubelet reads it
// (newNodeLogQuery), then checked as it checks it (validate), every error in the API's field-error
// words. Services go to journalctl as arguments, never through a shell; a file is looked up only
// inside the node's log directory.
import { goQuote, invalid, required, stringer } from '../../config/validate/field-errors.js';
import { goTimeString, parseRFC3339, type GoTime } from './go-time.js';
import { firstValue, type GoUrlValues } from './go-url-values.js';

export const MAX_TAIL_LINES = 100_000;
export const MAX_SERVICE_LENGTH = 256;
export const MAX_SERVICES = 4;
/** The characters journalctl flags may be given: anything else in a service name is refused. */
const UNSAFE_SERVICE_CHARACTERS = /[^a-zA-Z\-_.:0-9@]+/;

export interface NodeLogOptions {
  readonly sinceTime?: GoTime;
  readonly untilTime?: GoTime;
  readonly tailLines?: bigint;
  readonly boot?: bigint;
  readonly pattern: string;
}

export interface NodeLogQuery {
  readonly services: readonly string[];
  readonly files: readonly string[];
  readonly options: NodeLogOptions;
}

export const hasOptions = (o: NodeLogOptions): boolean =>
  o.sinceTime !== undefined ||
  o.untilTime !== undefined ||
  o.tailLines !== undefined ||
  o.boot !== undefined ||
  o.pattern !== '';

/** A []string as Go's %#v prints it: []string{"a", "b"}. */
const goStringSlice = (items: readonly string[]): ReturnType<typeof stringer> =>
  stringer(`[]string{${items.map(goQuote).join(', ')}}`);

/** strconv.Atoi on a 64-bit node. */
function atoi(s: string): { value: bigint } | { error: string } {
  const quoted = goQuote(s);
  if (!/^[+-]?\d+$/.test(s)) return { error: `strconv.Atoi: parsing ${quoted}: invalid syntax` };
  const value = BigInt(s);
  if (value > 9223372036854775807n || value < -9223372036854775808n)
    return { error: `strconv.Atoi: parsing ${quoted}: value out of range` };
  return { value };
}

export type ParsedNodeLogQuery =
  { readonly errors: readonly string[] } | { readonly errors: readonly []; readonly query: NodeLogQuery | undefined };

/**
 * newNodeLogQuery: the query, or undefined when the request has none of its parameters (then
 * /logs/ serves the directory as it always did); errors are answered 400.
 */
export function parseNodeLogQuery(values: GoUrlValues): ParsedNodeLogQuery {
  const errors: string[] = [];
  const services: string[] = [];
  const files: string[] = [];
  const queries = values.get('query');
  for (const q of queries ?? []) {
    // A slash or backslash says the query is a file; `foo.log` without one is a service, and the
    // heuristics still find /var/log/foo.log for it.
    if (/[/\\]/.test(q)) files.push(q);
    else if (q.trim() !== '') services.push(q);
  }
  if (queries !== undefined && files.length === 0 && services.length === 0)
    errors.push(invalid(['query'], goStringSlice(queries), 'query cannot be empty'));

  const time = (name: 'sinceTime' | 'untilTime'): GoTime | undefined => {
    const text = firstValue(values, name);
    if (text === '') return undefined;
    const t = parseRFC3339(text);
    if (!t) errors.push(invalid([name], text, 'invalid time format'));
    return t;
  };
  const integer = (name: 'boot' | 'tailLines'): bigint | undefined => {
    const text = firstValue(values, name);
    if (text === '') return undefined;
    const r = atoi(text);
    if ('error' in r) {
      errors.push(invalid([name], text, r.error));
      return undefined;
    }
    return r.value;
  };
  const sinceTime = time('sinceTime');
  const untilTime = time('untilTime');
  const boot = integer('boot');
  const tailLines = integer('tailLines');
  const pattern = firstValue(values, 'pattern');
  if (errors.length > 0) return { errors };

  const options: NodeLogOptions = {
    pattern,
    ...(sinceTime ? { sinceTime } : {}),
    ...(untilTime ? { untilTime } : {}),
    ...(boot !== undefined ? { boot } : {}),
    ...(tailLines !== undefined ? { tailLines } : {}),
  };
  if (services.length === 0 && files.length === 0 && !hasOptions(options)) return { errors: [], query: undefined };
  return { errors: [], query: { services, files, options } };
}

export interface NodeLogQueryChecks {
  /** os.Stat's error for the one file asked for, resolved inside the log directory (securejoin). */
  fileProblem(file: string): Promise<string | undefined>;
  /** Go's regexp/syntax error for the pattern. */
  patternProblem(pattern: string): Promise<string | undefined>;
}

function serviceProblem(s: string): string | undefined {
  // The kubelet's words, whose 100 is not its limit.
  if (Buffer.byteLength(s) > MAX_SERVICE_LENGTH) return 'length must be less than 100';
  if (UNSAFE_SERVICE_CHARACTERS.test(s)) return 'input contains unsupported characters';
  return undefined;
}

/** validate(): the query's errors, answered 406 (none: it may run). */
export async function validateNodeLogQuery(q: NodeLogQuery, checks: NodeLogQueryChecks): Promise<string[]> {
  const errors: string[] = [];
  for (const s of q.services) {
    const problem = serviceProblem(s);
    if (problem) errors.push(invalid(['query'], s, problem));
  }
  if (q.services.length > MAX_SERVICES)
    errors.push(`query: Too many: ${q.services.length}: must have at most ${MAX_SERVICES} items`);

  if (q.files.length === 0 && q.services.length === 0) errors.push(required(['query'], 'cannot be empty with options'));
  else if (q.files.length > 0 && q.services.length > 0)
    errors.push(
      invalid(['query'], `[${q.files.join(' ')}], [${q.services.join(' ')}]`, 'cannot specify a file and service'),
    );
  else if (q.files.length > 1)
    errors.push(invalid(['query'], goStringSlice(q.files), 'cannot specify more than one file'));
  else if (q.files.length === 1 && hasOptions(q.options))
    errors.push(invalid(['query'], goStringSlice(q.files), 'cannot specify file with options'));
  else if (q.files.length === 1) {
    const problem = await checks.fileProblem(q.files[0]!);
    if (problem) errors.push(invalid(['query'], goStringSlice(q.files), problem));
  }

  const { sinceTime, untilTime, boot, tailLines, pattern } = q.options;
  if (sinceTime && untilTime && sinceTime.ns > untilTime.ns)
    errors.push(invalid(['untilTime'], stringer(goTimeString(untilTime)), 'must be after `sinceTime`'));
  if (boot !== undefined && boot > 0n) errors.push(invalid(['boot'], stringer(String(boot)), 'must be less than 1'));
  if (tailLines !== undefined && (tailLines < 0n || tailLines > BigInt(MAX_TAIL_LINES)))
    errors.push(
      invalid(['tailLines'], stringer(String(tailLines)), `must be between 0 and ${MAX_TAIL_LINES}, inclusive`),
    );
  const patternProblem = await checks.patternProblem(pattern);
  if (patternProblem) errors.push(invalid(['pattern'], pattern, patternProblem));
  return errors;
}

/** field.ErrorList.ToAggregate().Error(): one error as it is, several in brackets, repeats once. */
export function aggregateErrors(errors: readonly string[]): string {
  const unique = [...new Set(errors)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}
