// securityContext.windowsOptions as the API server checks it (validateWindowsSecurityContextOptions)
// and the HostProcess rules of a pod (validateWindowsHostProcessPod): a GMSA spec name that is a
// resource name, a spec that is neither empty nor over 64 KiB, a runAsUserName of the form
// [DOMAIN\]USER within Windows' limits; HostProcess all or nothing, set alike on pod and container,
// and only with hostNetwork. Checked whatever the pod's OS: a linux pod may not set them at all
// (os-rules.ts).
import type { PodSpec, WindowsSecurityContextOptions } from 'kubernetes-types/core/v1';
import type { PathPart } from '../field-path';
import { isDNS1123Subdomain } from './api-formats';
import { invalid } from './field-errors';
import { containersWithPaths } from './pod-containers';

const MAX_GMSA_SPEC_KIB = 64;
const MAX_DOMAIN_LENGTH = 256;
const MAX_USER_LENGTH = 104;
const CONTROL = /[\x00-\x1f\x7f]/;
const NETBIOS_DOMAIN = /^[^\\/:*?"<>|.][^\\/:*?"<>|]{0,14}$/u;
const DNS_LABEL = '[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?';
const DNS_DOMAIN = new RegExp(`^${DNS_LABEL}(?:\\.${DNS_LABEL})*$`);
const USER_FORBIDDEN_CHARS = /["/\\:;|=,+*?<>@[\]]/;
const ONLY_DOTS_AND_SPACES = /^[. ]+$/;
const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

function runAsUserName(name: string, p: readonly PathPart[], out: string[]): void {
  const bad = (m: string): void => void out.push(invalid(p, name, m));
  if (name.length === 0) return bad('runAsUserName cannot be an empty string');
  if (CONTROL.test(name)) return bad('runAsUserName cannot contain control characters');
  const parts = name.split('\\');
  if (parts.length > 2) return bad('runAsUserName cannot contain more than one backslash');
  const [domain, user] = parts.length === 1 ? ['', parts[0]!] : [parts[0]!, parts[1]!];
  if (bytes(domain) >= MAX_DOMAIN_LENGTH)
    bad(`runAsUserName's Domain length must be under ${MAX_DOMAIN_LENGTH} characters`);
  if (parts.length === 2 && !(NETBIOS_DOMAIN.test(domain) || DNS_DOMAIN.test(domain)))
    bad("runAsUserName's Domain doesn't match the NetBios nor the DNS format");
  if (user.length === 0) bad("runAsUserName's User cannot be empty");
  else if (bytes(user) > MAX_USER_LENGTH)
    bad(`runAsUserName's User length must not be longer than ${MAX_USER_LENGTH} characters`);
  if (ONLY_DOTS_AND_SPACES.test(user)) bad("runAsUserName's User cannot contain only periods or spaces");
  if (USER_FORBIDDEN_CHARS.test(user))
    bad(`runAsUserName's User cannot contain the following characters: "/\\:;|=,+*?<>@[]`);
}

export function validateWindowsOptions(
  w: WindowsSecurityContextOptions | undefined,
  p: readonly PathPart[],
  out: string[],
): void {
  if (!w) return;
  const specName = w.gmsaCredentialSpecName;
  if (specName !== undefined && specName !== null)
    for (const m of isDNS1123Subdomain(specName)) out.push(invalid([...p, 'gmsaCredentialSpecName'], specName, m));
  const spec = w.gmsaCredentialSpec;
  if (spec !== undefined && spec !== null) {
    if (spec.length === 0)
      out.push(invalid([...p, 'gmsaCredentialSpec'], spec, 'gmsaCredentialSpec cannot be an empty string'));
    else if (bytes(spec) > MAX_GMSA_SPEC_KIB * 1024)
      out.push(
        invalid([...p, 'gmsaCredentialSpec'], spec, `gmsaCredentialSpec size must be under ${MAX_GMSA_SPEC_KIB} KiB`),
      );
  }
  if (w.runAsUserName !== undefined && w.runAsUserName !== null)
    runAsUserName(w.runAsUserName, [...p, 'runAsUserName'], out);
}

/** validateWindowsHostProcessPod (the kubelet allows privileged pods, so HostProcess is not refused by policy). */
export function validateHostProcess(spec: PodSpec, out: string[]): void {
  const podHostProcess = spec.securityContext?.windowsOptions?.hostProcess;
  let containers = 0;
  let hostProcess = 0;
  for (const [c, p] of containersWithPaths(spec)) {
    containers++;
    const own = c.securityContext?.windowsOptions?.hostProcess;
    const has = (v: boolean | undefined | null): v is boolean => v !== undefined && v !== null;
    if (has(podHostProcess) && has(own) && podHostProcess !== own)
      out.push(
        invalid(
          [...p, 'securityContext', 'windowsOptions', 'hostProcess'],
          own,
          `pod hostProcess value must be identical if both are specified, was ${podHostProcess}`,
        ),
      );
    if (own === true || (!has(own) && podHostProcess === true)) hostProcess++;
  }
  if (hostProcess === 0) return;
  if (hostProcess !== containers)
    out.push(
      invalid(
        ['spec'],
        '',
        'If pod contains any hostProcess containers then all containers must be HostProcess containers',
      ),
    );
  if (!spec.hostNetwork)
    out.push(
      invalid(['spec', 'hostNetwork'], false, 'hostNetwork must be true if pod contains any hostProcess containers'),
    );
}
