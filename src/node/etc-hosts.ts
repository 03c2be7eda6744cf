// The /etc/hosts file the kubelet gives a pod's containers (kubelet_pods.go ensureHostsFile).
import type { HostAlias } from 'kubernetes-types/core/v1';

export const HOST_NETWORK_HOSTS_HEADER = '# Kubernetes-managed hosts file (host network).\n';
export const POD_NETWORK_HOSTS_HEADER = '# Kubernetes-managed hosts file.\n';

export function hostAliasesBlock(aliases: HostAlias[] | undefined): string {
  if (!aliases || aliases.length === 0) return '';
  let out = '\n# Entries added by HostAliases.\n';
  for (const a of aliases) out += `${a.ip ?? ''}\t${(a.hostnames ?? []).join('\t')}\n`;
  return out;
}

/** Host network: the node's own hosts file under a header, then the pod's aliases. */
export function hostNetworkHostsFile(nodeHosts: string, aliases: HostAlias[] | undefined): string {
  return HOST_NETWORK_HOSTS_HEADER + nodeHosts + hostAliasesBlock(aliases);
}

/** Pod network: localhost boilerplate, the pod's own IPs and name, then the aliases. */
export function podNetworkHostsFile(
  podIPs: string[],
  hostname: string,
  domain: string,
  aliases: HostAlias[] | undefined,
): string {
  let out =
    POD_NETWORK_HOSTS_HEADER +
    '127.0.0.1\tlocalhost\n' +
    '::1\tlocalhost ip6-localhost ip6-loopback\n' +
    'fe00::0\tip6-localnet\n' +
    'fe00::0\tip6-mcastprefix\n' +
    'fe00::1\tip6-allnodes\n' +
    'fe00::2\tip6-allrouters\n';
  for (const ip of podIPs) out += domain ? `${ip}\t${hostname}.${domain}\t${hostname}\n` : `${ip}\t${hostname}\n`;
  return out + hostAliasesBlock(aliases);
}
