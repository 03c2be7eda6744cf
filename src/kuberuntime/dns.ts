// The pod's DNS configuration from its dnsPolicy, as the kubelet's dns configurer builds it
// (pkg/kubelet/network/dns): host resolv.conf, cluster DNS, or the pod's own dnsConfig, merged and
// cut to the resolver's limits.
import type { Pod, PodDNSConfigOption } from 'kubernetes-types/core/v1';
import type { DNSConfig } from '../cri/cri-types.js';

/** A DNSConfig with every list present (the generated CRI type has them optional): the merges below read them. */
type ResolverConfig = Required<DNSConfig>;

/** glibc reads at most 3 nameservers. */
export const MAX_DNS_NAMESERVERS = 3;
/** Limits the API and the kubelet apply to search domains (count, total characters). */
export const MAX_DNS_SEARCH_PATHS = 32;
export const MAX_DNS_SEARCH_LIST_CHARS = 2048;

export interface ClusterDnsOptions {
  /** --cluster-dns; empty: ClusterFirst pods fall back to the host's DNS, as the kubelet does. */
  clusterDNS?: string[];
  /** --cluster-domain, e.g. cluster.local. */
  clusterDomain?: string;
}

/** Parses resolv.conf text: every nameserver, the last search line, options merged by name. */
export function parseResolvConf(text: string): ResolverConfig {
  const servers: string[] = [];
  let searches: string[] = [];
  let options: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.startsWith(';')) continue;
    const fields = line.trim().split(/\s+/).filter(Boolean);
    if (fields.length === 0) continue;
    const [key, ...rest] = fields;
    if (key === 'nameserver' && rest[0]) servers.push(rest[0]);
    // A trailing dot and a bare '.' mean nothing to the resolver; dropping them avoids counting
    // one domain twice against the limits.
    if (key === 'search') searches = rest.filter((s) => s !== '.').map((s) => s.replace(/\.$/, ''));
    if (key === 'options') options = mergeOptions(options, rest);
  }
  return { servers, searches, options };
}

function optionName(o: string): string {
  const i = o.indexOf(':');
  return i === -1 ? o : o.slice(0, i);
}

/** Later options replace earlier ones of the same name, keeping the first one's position. */
function mergeOptions(existing: string[], added: string[]): string[] {
  const byName = new Map<string, string>();
  for (const o of [...existing, ...added]) byName.set(optionName(o), o);
  return [...byName.values()];
}

function podOptionsAsText(options: PodDNSConfigOption[]): string[] {
  return options.filter((o) => o.name).map((o) => (o.value ? `${o.name}:${o.value}` : o.name!));
}

function unique(xs: string[]): string[] {
  return [...new Set(xs)];
}

type DnsType = 'none' | 'cluster' | 'host';

function dnsType(pod: Pod, hasClusterDns: boolean): DnsType {
  const policy = pod.spec?.dnsPolicy ?? 'ClusterFirst';
  let t: DnsType;
  if (policy === 'None') t = 'none';
  else if (policy === 'ClusterFirstWithHostNet') t = 'cluster';
  // A host-network pod cannot reach cluster DNS by default: ClusterFirst acts as Default.
  else if (policy === 'ClusterFirst') t = pod.spec?.hostNetwork ? 'host' : 'cluster';
  else t = 'host';
  // No cluster DNS configured: the kubelet falls back to the host's (event MissingClusterDNS).
  if (t === 'cluster' && !hasClusterDns) t = 'host';
  return t;
}

function fitSearches(searches: string[]): string[] {
  const out: string[] = [];
  let chars = 0;
  for (const s of searches.slice(0, MAX_DNS_SEARCH_PATHS)) {
    // The resolver counts the separating spaces too.
    const add = s.length + (out.length > 0 ? 1 : 0);
    if (chars + add > MAX_DNS_SEARCH_LIST_CHARS) break;
    out.push(s);
    chars += add;
  }
  return out;
}

/**
 * `resolvConf` is the content of the node's resolv.conf (kubelet --resolv-conf), or undefined when
 * there is none: then, as the kubelet, host-DNS pods get 127.0.0.1 and search '.'.
 */
export function podDnsConfig(pod: Pod, resolvConf: string | undefined, opts: ClusterDnsOptions = {}): ResolverConfig {
  const clusterDNS = opts.clusterDNS ?? [];
  const host = resolvConf === undefined ? { servers: [], searches: [], options: [] } : parseResolvConf(resolvConf);
  let cfg: ResolverConfig;
  switch (dnsType(pod, clusterDNS.length > 0)) {
    case 'none':
      cfg = { servers: [], searches: [], options: [] };
      break;
    case 'cluster': {
      const domain = opts.clusterDomain ?? '';
      const ns = pod.metadata?.namespace ?? 'default';
      const clusterSearch = domain ? [`${ns}.svc.${domain}`, `svc.${domain}`, domain] : [];
      cfg = { servers: [...clusterDNS], searches: unique([...clusterSearch, ...host.searches]), options: ['ndots:5'] };
      break;
    }
    case 'host':
      cfg = resolvConf === undefined ? { servers: ['127.0.0.1'], searches: ['.'], options: [] } : host;
      break;
  }
  const own = pod.spec?.dnsConfig;
  if (own) {
    cfg = {
      servers: unique([...cfg.servers, ...(own.nameservers ?? [])]),
      searches: unique([...cfg.searches, ...(own.searches ?? [])]),
      options: mergeOptions(cfg.options, podOptionsAsText(own.options ?? [])),
    };
  }
  return {
    servers: cfg.servers.slice(0, MAX_DNS_NAMESERVERS),
    searches: fitSearches(cfg.searches),
    options: cfg.options,
  };
}
