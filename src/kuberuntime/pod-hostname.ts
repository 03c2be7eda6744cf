// The hostname a pod-network sandbox gets (GeneratePodHostNameAndDomain + GetNodenameForKernel).
// Host-network pods get none: the runtime leaves the node's, and runc refuses to set one without
// a private UTS namespace.
import type { Pod } from 'kubernetes-types/core/v1';

/** Longest hostname the kernel and DNS labels allow. */
export const MAX_HOSTNAME_LENGTH = 63;
/** Longest FQDN the kernel accepts as a hostname (setHostnameAsFQDN). */
export const MAX_FQDN_LENGTH = 64;

export class PodHostnameError extends Error {
  override name = 'PodHostnameError';
}

function truncateHostname(podName: string, hostname: string): string {
  if (hostname.length <= MAX_HOSTNAME_LENGTH) return hostname;
  const truncated = hostname.slice(0, MAX_HOSTNAME_LENGTH).replace(/[-.]+$/, '');
  if (truncated === '')
    throw new PodHostnameError(`hostname for pod ${JSON.stringify(podName)} was invalid: ${JSON.stringify(hostname)}`);
  return truncated;
}

/**
 * spec.hostnameOverride (1.34, KEP-4762, HostnameOverride on since 1.35): the hostname and the FQDN
 * both, in place of hostname, subdomain and setHostnameAsFQDN. Validation holds it to a subdomain of
 * at most 64 characters, which the kernel takes whole.
 */
const hostnameOverride = (pod: Pod): string | undefined => pod.spec?.hostnameOverride || undefined;

export function podHostname(pod: Pod, clusterDomain = ''): string {
  const override = hostnameOverride(pod);
  if (override !== undefined) return override;
  const name = pod.metadata?.name ?? '';
  const hostname = truncateHostname(name, pod.spec?.hostname || name);
  const subdomain = pod.spec?.subdomain;
  if (!pod.spec?.setHostnameAsFQDN || !subdomain) return hostname;
  const fqdn = `${hostname}.${subdomain}.${pod.metadata?.namespace ?? 'default'}.svc.${clusterDomain}`;
  if (fqdn.length > MAX_FQDN_LENGTH) {
    throw new PodHostnameError(
      `failed to construct FQDN from pod hostname and cluster domain, FQDN ${fqdn} is too long (${MAX_FQDN_LENGTH} characters is the max, ${fqdn.length} characters requested)`,
    );
  }
  return fqdn;
}

/**
 * The short hostname and the DNS domain the managed /etc/hosts names the pod by (the kubelet's
 * GeneratePodHostNameAndDomain): a domain only with a subdomain, `<subdomain>.<namespace>.svc.<clusterDomain>`.
 */
export function podHostnameAndDomain(pod: Pod, clusterDomain = ''): { hostname: string; domain: string } {
  const override = hostnameOverride(pod);
  if (override !== undefined) return { hostname: override, domain: '' };
  const name = pod.metadata?.name ?? '';
  const hostname = truncateHostname(name, pod.spec?.hostname || name);
  const subdomain = pod.spec?.subdomain;
  return {
    hostname,
    domain: subdomain ? `${subdomain}.${pod.metadata?.namespace ?? 'default'}.svc.${clusterDomain}` : '',
  };
}
