// The value formats of apimachinery's util/validation (v1.34), each returning every message the
// API server gives for a value, in its words: DNS labels and subdomains, qualified names (label
// and annotation keys), label values, environment variable names, port numbers and names, HTTP
// header names. Lengths are in bytes, as Go's len().

/** apimachinery's RegexError: the rule, examples, and the regular expression. */
export function regexError(msg: string, re: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${re}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${re}')`;
}
export const maxLenError = (n: number): string => `must be no more than ${n} characters`;
export const inclusiveRangeError = (lo: number, hi: number): string => `must be between ${lo} and ${hi}, inclusive`;
const EMPTY = 'must be non-empty';
const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');
const whole = (re: string): RegExp => new RegExp(`^(?:${re})$`);

const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN = `${DNS1123_LABEL}(\\.${DNS1123_LABEL})*`;
const QUALIFIED_NAME = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE = `(${QUALIFIED_NAME})?`;
const HTTP_HEADER_NAME = '[-A-Za-z0-9]+';
const QUALIFIED_NAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

export function isDNS1123Label(v: string): string[] {
  const errs: string[] = [];
  if (bytes(v) > 63) errs.push(maxLenError(63));
  if (!whole(DNS1123_LABEL).test(v)) {
    if (whole(DNS1123_SUBDOMAIN).test(v)) errs.push('must not contain dots');
    else
      errs.push(
        regexError(
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
          DNS1123_LABEL,
          'my-name',
          '123-abc',
        ),
      );
  }
  return errs;
}

export function isDNS1123Subdomain(v: string): string[] {
  const errs: string[] = [];
  if (bytes(v) > 253) errs.push(maxLenError(253));
  if (!whole(DNS1123_SUBDOMAIN).test(v)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN,
        'example.com',
      ),
    );
  }
  return errs;
}

/** Label keys, and annotation keys (lower-cased first). */
export function isQualifiedName(v: string): string[] {
  const errs: string[] = [];
  const parts = v.split('/');
  let name: string;
  if (parts.length === 1) name = parts[0]!;
  else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push(`prefix part ${EMPTY}`);
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a qualified name ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push(`name part ${EMPTY}`);
  else if (bytes(name) > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!whole(QUALIFIED_NAME).test(name))
    errs.push(`name part ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

export function isValidLabelValue(v: string): string[] {
  const errs: string[] = [];
  if (bytes(v) > 63) errs.push(maxLenError(63));
  if (!whole(LABEL_VALUE).test(v)) {
    errs.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  }
  return errs;
}

/** IsRelaxedEnvVarName: RelaxedEnvironmentVariableValidation is GA (locked on) since v1.34. */
export function isRelaxedEnvVarName(v: string): string[] {
  const errs: string[] = [];
  if (v.length === 0) errs.push(`environment variable name ${EMPTY}`);
  if (!/^[\x20-\x3c\x3e-\x7e]*$/.test(v))
    errs.push("a valid environment variable name must consist only of printable ASCII characters other than '='");
  return errs;
}

export function isValidPortNum(n: number): string[] {
  return Number.isInteger(n) && n >= 1 && n <= 65535 ? [] : [inclusiveRangeError(1, 65535)];
}

/** An IANA service name: what a port may be called (container ports, probe ports by name). */
export function isValidPortName(v: string): string[] {
  const errs: string[] = [];
  if (bytes(v) > 15) errs.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(v)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(v)) errs.push('must contain at least one letter (a-z)');
  if (v.includes('--')) errs.push('must not contain consecutive hyphens');
  if (v.length > 0 && (v.startsWith('-') || v.endsWith('-'))) errs.push('must not begin or end with a hyphen');
  return errs;
}

export function isHTTPHeaderName(v: string): string[] {
  return whole(HTTP_HEADER_NAME).test(v)
    ? []
    : [
        regexError(
          "a valid HTTP header must consist of alphanumeric characters or '-'",
          HTTP_HEADER_NAME,
          'X-Header-Name',
        ),
      ];
}

const IP_EXAMPLE = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';
const BIG = 0xffffff;

/** A run of digits in `base` at the start of s, as Go's dtoi/xtoi read it: [value, length], or undefined. */
function leadingNumber(s: string, base: 10 | 16): [number, number] | undefined {
  let n = 0;
  let i = 0;
  for (; i < s.length; i++) {
    const d = Number.parseInt(s[i]!, base);
    if (Number.isNaN(d)) break;
    n = n * base + d;
    if (n >= BIG) return undefined;
  }
  return i === 0 ? undefined : [n, i];
}

/** Four decimal parts of at most 255 each; leading zeros allowed (ParseIPSloppy). */
function isSloppyIPv4(s: string): boolean {
  let rest = s;
  for (let i = 0; i < 4; i++) {
    if (i > 0) {
      if (!rest.startsWith('.')) return false;
      rest = rest.slice(1);
    }
    const num = leadingNumber(rest, 10);
    if (!num || num[0] > 0xff) return false;
    rest = rest.slice(num[1]);
  }
  return rest === '';
}

/** Eight groups of hex, one `::` for a run of zero groups, an IPv4 address in the last 32 bits. */
function isSloppyIPv6(s: string): boolean {
  let rest = s;
  let ellipsis = -1;
  if (rest.startsWith('::')) {
    ellipsis = 0;
    rest = rest.slice(2);
    if (rest === '') return true;
  }
  let i = 0;
  while (i < 16) {
    const num = leadingNumber(rest, 16);
    if (!num || num[0] > 0xffff) return false;
    if (rest[num[1]] === '.') {
      if ((ellipsis < 0 && i !== 12) || i + 4 > 16 || !isSloppyIPv4(rest)) return false;
      rest = '';
      i += 4;
      break;
    }
    i += 2;
    rest = rest.slice(num[1]);
    if (rest === '') break;
    if (rest[0] !== ':' || rest.length === 1) return false;
    rest = rest.slice(1);
    if (rest[0] === ':') {
      if (ellipsis >= 0) return false;
      ellipsis = i;
      rest = rest.slice(1);
      if (rest === '') break;
    }
  }
  if (rest !== '') return false;
  return i < 16 ? ellipsis >= 0 : ellipsis < 0;
}

/**
 * IsValidIP: what k8s.io/utils/net's ParseIPSloppy takes (Go 1.16's net.ParseIP: no zone, no
 * brackets, no spaces), so nothing but an address can reach /etc/hosts or resolv.conf.
 */
export function isValidIP(v: string): string[] {
  const sep = /[.:]/.exec(v)?.[0];
  const ok = sep === '.' ? isSloppyIPv4(v) : sep === ':' ? isSloppyIPv6(v) : false;
  return ok ? [] : [IP_EXAMPLE];
}

const MAX_ID = 2147483647;

/** IsValidUserID and IsValidGroupID: 0 to MaxInt32. */
export function isValidID(n: number): string[] {
  return Number.isInteger(n) && n >= 0 && n <= MAX_ID ? [] : [inclusiveRangeError(0, MAX_ID)];
}

const CONFIG_MAP_KEY = '[-._a-zA-Z0-9]+';

/** IsConfigMapKey: a key of a ConfigMap or Secret, which names a file in a volume. */
export function isConfigMapKey(v: string): string[] {
  const errs: string[] = [];
  if (bytes(v) > 253) errs.push(maxLenError(253));
  if (!whole(CONFIG_MAP_KEY).test(v))
    errs.push(
      regexError(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
        CONFIG_MAP_KEY,
        'key.name',
        'KEY_NAME',
        'key-name',
      ),
    );
  if (v === '.') errs.push("must not be '.'");
  else if (v === '..') errs.push("must not be '..'");
  else if (v.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

/** NameIsDNSSubdomain with prefix: a name that will have a suffix appended may end in '-'. */
export function isDNS1123SubdomainPrefix(v: string): string[] {
  return isDNS1123Subdomain(v.endsWith('-') ? `${v.slice(0, -1)}a` : v);
}
