// The kubelet's checks on single values (pkg/kubelet/apis/config/validation and the flag
// validators), as small reusable predicates returning the reason a value is refused.
import { isIP } from 'node:net';
import { posix } from 'node:path';
import { sysctlPatternProblem } from '../../k8s/sysctls.js';
import { cipherSuitesProblem } from '../../server/tls/cipher-suites.js';
import { formatDuration } from '../../util/duration.js';

export type Check<T> = (value: T) => string | undefined;

export const positiveDuration: Check<number> = (ms) => (ms > 0 ? undefined : 'must be greater than 0');

export const atLeastDuration =
  (minMs: number): Check<number> =>
  (ms) =>
    ms >= minMs ? undefined : `must be at least ${formatDuration(minMs)}`;

export const atLeast =
  (min: number): Check<number> =>
  (n) =>
    n >= min ? undefined : `must be at least ${min}`;

export const between =
  (min: number, max: number): Check<number> =>
  (n) =>
    n >= min && n <= max ? undefined : `must be between ${min} and ${max}, inclusive`;

/** A port where 0 turns the endpoint off. */
export const portOrZero: Check<number> = between(0, 65535);
export const port: Check<number> = between(1, 65535);

export const oneOf =
  (...allowed: string[]): Check<string> =>
  (v) =>
    allowed.includes(v) ? undefined : `must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`;

/** tlsCipherSuites: Go's names (cliflag.TLSCipherSuites), each one this OpenSSL can serve. */
export const cipherSuites: Check<readonly string[]> = cipherSuitesProblem;

export const nonEmpty: Check<string> = (v) => (v.trim() === '' ? 'must not be empty' : undefined);

/** podLogsDir: absolute, normalized, ASCII only (it is used in metric labels). */
export const cleanAbsoluteAsciiPath: Check<string> = (p) => {
  if (!p.startsWith('/')) return `pod logs path ${JSON.stringify(p)} must be absolute path`;
  if (posix.normalize(p).replace(/(.)\/$/, '$1') !== p) return `pod logs path ${JSON.stringify(p)} must be normalized`;
  if (/[^\x00-\x7f]/.test(p)) return `pod logs path ${JSON.stringify(p)} must contain ASCII characters only`;
  return undefined;
};

/** --node-ip: one IP, or two of different families (dual-stack). */
export const nodeIPs: Check<string> = (v) => {
  if (v === '') return undefined;
  const ips = v.split(',').map((s) => s.trim());
  if (ips.some((s) => isIP(s) === 0))
    return `${JSON.stringify(v)} is not an IP address or a comma-separated pair of them`;
  if (ips.length > 2 || (ips.length === 2 && isIP(ips[0]!) === isIP(ips[1]!)))
    return 'takes at most one IPv4 and one IPv6 address';
  return undefined;
};

/** staticPodURL: empty (off), or an http or https URL. */
export const httpUrlOrEmpty: Check<string> = (v) => {
  if (v === '') return undefined;
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:'
      ? undefined
      : `must be an http or https URL, not ${u.protocol}`;
  } catch {
    return 'is not a valid URL';
  }
};

/** allowedUnsafeSysctls: each a valid name or prefix known to be namespaced (the kubelet refuses to start otherwise). */
export const sysctlPatterns: Check<string[]> = (list) => {
  for (const p of list) {
    const problem = sysctlPatternProblem(p);
    if (problem !== undefined) return problem;
  }
  return undefined;
};
