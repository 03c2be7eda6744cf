// Probes and lifecycle hooks as the API server checks them (validateProbe, validateHandler): one
// handler exactly, exec with a command, httpGet with a path, a port number or name, a scheme and
// header names Go's HTTP client can send, tcpSocket and grpc with valid ports, a sleep within the
// grace period (zero allowed, PodLifecycleSleepActionAllowZero); probe numbers not negative,
// liveness and startup successThreshold 1, and no probe or hook on a plain init container.
import type { Container, HTTPGetAction, Lifecycle, LifecycleHandler, Probe } from 'kubernetes-types/core/v1';
import type { PathPart } from '../field-path';
import { isHTTPHeaderName, isValidPortName, isValidPortNum } from './api-formats';
import { forbidden, invalid, required, unsupported } from './field-errors';

const SCHEMES = ['HTTP', 'HTTPS'] as const;
type Handler = Pick<Probe, 'exec' | 'httpGet' | 'tcpSocket' | 'grpc'> & Pick<LifecycleHandler, 'sleep'>;

function portNumOrName(port: number | string | undefined, p: readonly PathPart[], out: string[]): void {
  if (typeof port === 'string') for (const m of isValidPortName(port)) out.push(invalid(p, port, m));
  else for (const m of isValidPortNum(port ?? 0)) out.push(invalid(p, port ?? 0, m));
}

function httpGet(h: HTTPGetAction, p: readonly PathPart[], out: string[]): void {
  if (!h.path) out.push(required([...p, 'path']));
  portNumOrName(h.port, [...p, 'port'], out);
  if (!(SCHEMES as readonly string[]).includes(h.scheme ?? ''))
    out.push(unsupported([...p, 'scheme'], h.scheme ?? '', SCHEMES));
  for (const header of h.httpHeaders ?? [])
    for (const m of isHTTPHeaderName(header.name)) out.push(invalid([...p, 'httpHeaders'], header.name, m));
}

/** The pod's terminationGracePeriodSeconds, which bounds a preStop sleep. */
type GracePeriod = number | undefined;

function handler(h: Handler, p: readonly PathPart[], grace: GracePeriod, out: string[]): void {
  let n = 0;
  const one = (key: keyof Handler, check: () => void): void => {
    if (h[key] === undefined || h[key] === null) return;
    if (n++ > 0) out.push(forbidden([...p, key], 'may not specify more than 1 handler type'));
    else check();
  };
  one('exec', () => {
    if (!h.exec!.command || h.exec!.command.length === 0) out.push(required([...p, 'exec', 'command']));
  });
  one('httpGet', () => httpGet(h.httpGet!, [...p, 'httpGet'], out));
  one('tcpSocket', () => portNumOrName(h.tcpSocket!.port, [...p, 'tcpSocket', 'port'], out));
  one('grpc', () => portNumOrName(h.grpc!.port, [...p, 'grpc', 'port'], out));
  one('sleep', () => {
    const seconds = h.sleep!.seconds;
    if (grace !== undefined && (seconds < 0 || seconds > grace)) {
      out.push(
        invalid(
          [...p, 'sleep'],
          seconds,
          `must be non-negative and less than terminationGracePeriodSeconds (${grace})`,
        ),
      );
    }
  });
  if (n === 0) out.push(required(p, 'must specify a handler type'));
}

const NUMBERS = [
  'initialDelaySeconds',
  'timeoutSeconds',
  'periodSeconds',
  'successThreshold',
  'failureThreshold',
] as const;

function probe(
  pr: Probe | undefined,
  p: readonly PathPart[],
  kind: 'liveness' | 'readiness' | 'startup',
  out: string[],
): void {
  if (!pr) return;
  handler(pr, p, undefined, out);
  for (const k of NUMBERS) {
    const v = pr[k];
    if (typeof v === 'number' && v < 0) out.push(invalid([...p, k], v, 'must be greater than or equal to 0'));
  }
  if (
    pr.terminationGracePeriodSeconds !== undefined &&
    pr.terminationGracePeriodSeconds !== null &&
    pr.terminationGracePeriodSeconds <= 0
  ) {
    out.push(
      invalid([...p, 'terminationGracePeriodSeconds'], pr.terminationGracePeriodSeconds, 'must be greater than 0'),
    );
  }
  if (kind !== 'readiness' && pr.successThreshold !== undefined && pr.successThreshold !== 1)
    out.push(invalid([...p, 'successThreshold'], pr.successThreshold, 'must be 1'));
  if (
    kind === 'readiness' &&
    pr.terminationGracePeriodSeconds !== undefined &&
    pr.terminationGracePeriodSeconds !== null
  ) {
    out.push(
      invalid(
        [...p, 'terminationGracePeriodSeconds'],
        pr.terminationGracePeriodSeconds,
        'must not be set for readinessProbes',
      ),
    );
  }
}

function lifecycle(l: Lifecycle | undefined, p: readonly PathPart[], grace: GracePeriod, out: string[]): void {
  if (l?.postStart) handler(l.postStart, [...p, 'postStart'], grace, out);
  if (l?.preStop) handler(l.preStop, [...p, 'preStop'], grace, out);
}

/** The probes and hooks of one container; `plainInit`: an init container without restartPolicy Always. */
export function validateHandlers(
  c: Container,
  path: readonly PathPart[],
  plainInit: boolean,
  grace: GracePeriod,
): string[] {
  const out: string[] = [];
  if (plainInit) {
    for (const k of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
      if (c[k]) out.push(forbidden([...path, k], 'may not be set for init containers without restartPolicy=Always'));
    }
    return out;
  }
  lifecycle(c.lifecycle, [...path, 'lifecycle'], grace, out);
  probe(c.livenessProbe, [...path, 'livenessProbe'], 'liveness', out);
  probe(c.readinessProbe, [...path, 'readinessProbe'], 'readiness', out);
  probe(c.startupProbe, [...path, 'startupProbe'], 'startup', out);
  return out;
}
