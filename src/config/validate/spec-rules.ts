// Pod-level fields of the spec as the API server checks them on create (validateDNSPolicy,
// validatePodDNSConfig with relaxed searches as v1.34, ValidateHostAliases, validateReadinessGates,
// validateSchedulingGates, validatePodHostNetworkDeps, validatePodHostName, and ValidatePodSpec's
// own: the active deadline, class, service account and node names, preemption policy). A host
// alias's IP and a nameserver are written
// into the pod's /etc/hosts and resolv.conf: anything but an address there is an injection.
import type { PodSpec } from 'kubernetes-types/core/v1';
import { inclusiveRangeError, isDNS1123Subdomain, isQualifiedName, isValidIP, regexError } from './api-formats';
import { duplicate, forbidden, goStrings, invalid, required, tooLong, unsupported } from './field-errors';

/** In the order the API server lists them. */
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'] as const;
const MAX_DNS_NAMESERVERS = 3;
const MAX_DNS_SEARCH_PATHS = 32;
const MAX_DNS_SEARCH_LIST_CHARS = 2048;
const MAX_INT32 = 2147483647;
const PREEMPTION_POLICIES = ['PreemptLowerPriority', 'Never'] as const;
const MAX_HOSTNAME_OVERRIDE = 64;
const SUBDOMAIN_WITH_UNDERSCORE_LABEL = '_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?';
const SUBDOMAIN_WITH_UNDERSCORE = `${SUBDOMAIN_WITH_UNDERSCORE_LABEL}(\\.${SUBDOMAIN_WITH_UNDERSCORE_LABEL})*`;

function isDNS1123SubdomainWithUnderscore(v: string): string[] {
  const errs: string[] = [];
  if (Buffer.byteLength(v, 'utf8') > 253) errs.push('must be no more than 253 characters');
  if (!new RegExp(`^(?:${SUBDOMAIN_WITH_UNDERSCORE})$`).test(v)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character",
        SUBDOMAIN_WITH_UNDERSCORE,
        'example.com',
      ),
    );
  }
  return errs;
}

function dnsConfig(spec: PodSpec, out: string[]): void {
  const path = ['spec', 'dnsConfig'];
  const cfg = spec.dnsConfig;
  if (spec.dnsPolicy === 'None') {
    if (!cfg) return void out.push(required(path, 'must provide `dnsConfig` when `dnsPolicy` is None'));
    if (!cfg.nameservers || cfg.nameservers.length === 0)
      return void out.push(
        required([...path, 'nameservers'], 'must provide at least one DNS nameserver when `dnsPolicy` is None'),
      );
  }
  if (!cfg) return;
  const ns = cfg.nameservers ?? [];
  if (ns.length > MAX_DNS_NAMESERVERS)
    out.push(
      invalid([...path, 'nameservers'], goStrings(ns), `must not have more than ${MAX_DNS_NAMESERVERS} nameservers`),
    );
  ns.forEach((n, i) => {
    for (const m of isValidIP(n)) out.push(invalid([...path, 'nameservers', i], n, m));
  });
  const searches = cfg.searches ?? [];
  if (searches.length > MAX_DNS_SEARCH_PATHS)
    out.push(
      invalid(
        [...path, 'searches'],
        goStrings(searches),
        `must not have more than ${MAX_DNS_SEARCH_PATHS} search paths`,
      ),
    );
  if (searches.join(' ').length > MAX_DNS_SEARCH_LIST_CHARS) {
    out.push(
      invalid(
        [...path, 'searches'],
        goStrings(searches),
        `must not have more than ${MAX_DNS_SEARCH_LIST_CHARS} characters (including spaces) in the search list`,
      ),
    );
  }
  searches.forEach((s, i) => {
    if (s === '.') return;
    const trimmed = s.endsWith('.') ? s.slice(0, -1) : s;
    for (const m of isDNS1123SubdomainWithUnderscore(trimmed)) out.push(invalid([...path, 'searches', i], trimmed, m));
  });
  (cfg.options ?? []).forEach((o, i) => {
    if (!o.name) out.push(required([...path, 'options', i], 'must not be empty'));
  });
}

/** The named classes, service account and node, the policies and the deadline. */
function classesAndLimits(spec: PodSpec, out: string[]): void {
  const deadline = spec.activeDeadlineSeconds;
  if (deadline !== undefined && (deadline < 1 || deadline > MAX_INT32))
    out.push(invalid(['spec', 'activeDeadlineSeconds'], deadline, inclusiveRangeError(1, MAX_INT32)));
  if (spec.priorityClassName)
    for (const m of isDNS1123Subdomain(spec.priorityClassName))
      out.push(invalid(['spec', 'priorityClassName'], spec.priorityClassName, m));
  if (spec.runtimeClassName !== undefined)
    for (const m of isDNS1123Subdomain(spec.runtimeClassName))
      out.push(invalid(['spec', 'runtimeClassName'], spec.runtimeClassName, m));
  const preemption = spec.preemptionPolicy;
  if (preemption !== undefined && !(PREEMPTION_POLICIES as readonly string[]).includes(preemption)) {
    out.push(
      preemption === ''
        ? required(['spec', 'preemptionPolicy'])
        : unsupported(['spec', 'preemptionPolicy'], preemption, PREEMPTION_POLICIES),
    );
  }
  for (const k of ['serviceAccountName', 'nodeName'] as const) {
    const v = spec[k];
    if (v) for (const m of isDNS1123Subdomain(v)) out.push(invalid(['spec', k], v, m));
  }
}

/** validatePodHostName: hostnameOverride (newer than kubernetes-types; HostnameOverride is on in 1.36). */
function hostnameOverride(spec: PodSpec, out: string[]): void {
  const v = (spec as { hostnameOverride?: string }).hostnameOverride;
  if (v === undefined || v === null) return;
  const p = ['spec', 'hostnameOverride'];
  if (spec.setHostnameAsFQDN) out.push(forbidden(p, 'may not be specified when setHostnameAsFQDN is true'));
  if (spec.hostNetwork) out.push(forbidden(p, 'may not be specified when hostNetwork is true'));
  if (Buffer.byteLength(v) > MAX_HOSTNAME_OVERRIDE) out.push(tooLong(p, MAX_HOSTNAME_OVERRIDE));
  for (const m of isDNS1123Subdomain(v)) out.push(invalid(p, v, m));
}

/**
 * `bound`: the pod has a node: every static pod (the kubelet sets spec.nodeName before it
 * validates), and an API pod with spec.nodeName.
 */
function schedulingGates(spec: PodSpec, bound: boolean, out: string[]): void {
  const seen = new Set<string>();
  (spec.schedulingGates ?? []).forEach((g, i) => {
    const name = g.name ?? '';
    for (const m of isQualifiedName(name)) out.push(invalid(['spec', 'schedulingGates', i], name, m));
    if (seen.has(name)) out.push(duplicate(['spec', 'schedulingGates', i], name));
    seen.add(name);
  });
  if (bound && (spec.schedulingGates ?? []).length > 0)
    out.push(forbidden(['spec', 'nodeName'], 'cannot be set until all schedulingGates have been cleared'));
}

export function validatePodSpecFields(spec: PodSpec, bound: boolean): string[] {
  const out: string[] = [];
  if (!spec.dnsPolicy) out.push(required(['spec', 'dnsPolicy']));
  else if (!(DNS_POLICIES as readonly string[]).includes(spec.dnsPolicy))
    out.push(unsupported(['spec', 'dnsPolicy'], spec.dnsPolicy, DNS_POLICIES));
  dnsConfig(spec, out);
  (spec.hostAliases ?? []).forEach((a, i) => {
    for (const m of isValidIP(a.ip ?? '')) out.push(invalid(['spec', 'hostAliases', i, 'ip'], a.ip ?? '', m));
    (a.hostnames ?? []).forEach((h, j) => {
      for (const m of isDNS1123Subdomain(h)) out.push(invalid(['spec', 'hostAliases', i, 'hostnames', j], h, m));
    });
  });
  (spec.readinessGates ?? []).forEach((g, i) => {
    for (const m of isQualifiedName(g.conditionType ?? ''))
      out.push(invalid(['spec', 'readinessGates', i, 'conditionType'], g.conditionType ?? '', m));
  });
  schedulingGates(spec, bound, out);
  classesAndLimits(spec, out);
  hostnameOverride(spec, out);
  if (spec.hostNetwork) {
    spec.containers?.forEach((c, i) => {
      (c.ports ?? []).forEach((p, j) => {
        if (p.hostPort !== p.containerPort)
          out.push(
            invalid(
              ['spec', 'containers', i, 'ports', j, 'hostPort'],
              p.hostPort ?? 0,
              'must match `containerPort` when `hostNetwork` is true',
            ),
          );
      });
    });
  }
  return out;
}
