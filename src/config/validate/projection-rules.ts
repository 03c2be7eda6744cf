// A projected volume's sources as the API server checks them (validateProjectionSources): one kind
// per source; configMap and secret items and downward API files as their own volumes have them;
// a service account token of 10 minutes to 2^32 seconds at a path inside the volume; a cluster
// trust bundle by name or by signer name and selector; a pod certificate's signer, key type and
// paths (newer than kubernetes-types); and no two files at one path.
import type { ClusterTrustBundleProjection, ConfigMapProjection, VolumeProjection } from 'kubernetes-types/core/v1';
import type { PathPart } from '../field-path';
import { isDNS1123Label, isDNS1123Subdomain } from './api-formats';
import { forbidden, goStruct, invalid, required, tooLong, unsupported } from './field-errors';
import { validateLabelSelector } from './label-selector-rules';
import { localNonReservedPath } from './path-rules';
import { downwardAPIFile, keyToPath } from './volume-file-rules';

const MIN_TOKEN_SECONDS = 10 * 60;
const MAX_TOKEN_SECONDS = 2 ** 32;
const KEY_TYPES = ['RSA3072', 'RSA4096', 'ECDSAP256', 'ECDSAP384', 'ECDSAP521', 'ED25519'] as const;
const MIN_CERTIFICATE_SECONDS = 3600;
const MAX_DOMAIN = 253;
const MAX_SIGNER_NAME = 253 + 253 + 63 + 1 + 1;

/** ValidateSignerName: `example.com/signer-name`, a domain of two labels or more, a path of subdomains. */
export function validateSignerName(name: string, p: readonly PathPart[], out: string[]): void {
  if (name === '') return void out.push(required(p));
  const segments = name.split('/');
  if (segments.length !== 2)
    return void out.push(
      invalid(p, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'"),
    );
  const [domain, path] = segments as [string, string];
  if (Buffer.byteLength(domain) > MAX_DOMAIN) out.push(tooLong(p, MAX_DOMAIN));
  const labels = domain.split('.');
  for (const l of labels) {
    const errs = isDNS1123Label(l);
    for (const m of errs) out.push(invalid(p, domain, `validating label ${JSON.stringify(l)}: ${m}`));
    if (errs.length > 0) break;
  }
  if (labels.length < 2)
    out.push(invalid(p, domain, 'should be a domain with at least two segments separated by dots'));
  for (const l of path.split('.')) {
    const errs = isDNS1123Subdomain(l);
    for (const m of errs) out.push(invalid(p, path, `validating label ${JSON.stringify(l)}: ${m}`));
    if (errs.length > 0) break;
  }
  if (Buffer.byteLength(name) > MAX_SIGNER_NAME) out.push(tooLong(p, MAX_SIGNER_NAME));
}

/** ValidateClusterTrustBundleName: `<signer with ':'>:<name>` for a signer's bundle, a plain subdomain otherwise. */
function trustBundleName(name: string): string[] {
  return isDNS1123Subdomain(name.slice(name.lastIndexOf(':') + 1));
}

function clusterTrustBundle(b: ClusterTrustBundleProjection, p: readonly PathPart[], out: string[]): void {
  const byName = b.name !== undefined && b.name !== null;
  const bySigner = b.signerName !== undefined && b.signerName !== null;
  if (byName && bySigner)
    out.push(
      invalid(p, goStruct('core.ClusterTrustBundleProjection', b), 'only one of name and signerName may be used'),
    );
  else if (byName) {
    if (b.name === '') out.push(required([...p, 'name'], 'must be a valid object name'));
    for (const m of trustBundleName(b.name!))
      out.push(invalid([...p, 'name'], b.name, `not a valid clustertrustbundlename: ${m}`));
    if (b.labelSelector)
      out.push(
        invalid(
          [...p, 'labelSelector'],
          goStruct('v1.LabelSelector', b.labelSelector),
          'labelSelector must be unset if name is specified',
        ),
      );
  } else if (bySigner) {
    if (b.signerName === '') out.push(required([...p, 'signerName'], 'must be a valid signer name'));
    validateSignerName(b.signerName!, [...p, 'signerName'], out);
    validateLabelSelector(b.labelSelector, [...p, 'labelSelector'], out);
  } else out.push(required(p, 'either name or signerName must be specified'));
  if (!b.path) out.push(required([...p, 'path']));
  localNonReservedPath([...p, 'path'], b.path ?? '', out);
}

interface PodCertificateProjection {
  signerName?: string;
  keyType?: string;
  maxExpirationSeconds?: number;
  credentialBundlePath?: string;
  keyPath?: string;
  certificateChainPath?: string;
}

function podCertificate(
  c: PodCertificateProjection,
  p: readonly PathPart[],
  claim: (path: string) => void,
  out: string[],
) {
  validateSignerName(c.signerName ?? '', [...p, 'signerName'], out);
  if (!(KEY_TYPES as readonly string[]).includes(c.keyType ?? ''))
    out.push(unsupported([...p, 'keyType'], c.keyType ?? '', KEY_TYPES));
  if (c.maxExpirationSeconds !== undefined && c.maxExpirationSeconds < MIN_CERTIFICATE_SECONDS)
    out.push(
      invalid(
        [...p, 'maxExpirationSeconds'],
        c.maxExpirationSeconds,
        'if provided, maxExpirationSeconds must be >= 3600',
      ),
    );
  let paths = 0;
  for (const k of ['credentialBundlePath', 'keyPath', 'certificateChainPath'] as const) {
    const path = c[k];
    if (!path) continue;
    paths++;
    localNonReservedPath([...p, k], path, out);
    claim(path);
  }
  if (paths === 0)
    out.push(required(p, 'specify at least one of credentialBundlePath, keyPath, and certificateChainPath'));
}

/** `p` is the projected source's path (`spec.volumes[i].projected`), which the API server also names a token's path with. */
export function projectionSources(sources: readonly VolumeProjection[], p: readonly PathPart[], out: string[]): void {
  const paths = new Set<string>();
  const claim = (path: string, shown: string): void => {
    if (paths.has(path)) out.push(invalid(p, shown, 'conflicting duplicate paths'));
    paths.add(path);
  };
  sources.forEach((s, i) => {
    const sp = [...p, 'sources', i];
    const rec = s as Record<string, unknown>;
    const kinds = [
      'secret',
      'configMap',
      'downwardAPI',
      'serviceAccountToken',
      'clusterTrustBundle',
      'podCertificate',
    ].filter((k) => rec[k] !== undefined && rec[k] !== null);
    for (const k of ['secret', 'configMap'] as const) {
      const src: ConfigMapProjection | undefined = s[k];
      if (!src) continue;
      if (!src.name) out.push(required([...sp, k, 'name']));
      (src.items ?? []).forEach((kp, j) => {
        keyToPath(kp, [...sp, k, 'items', j], out);
        if (kp.path) claim(kp.path, src.name ?? '');
      });
    }
    for (const file of s.downwardAPI?.items ?? []) {
      downwardAPIFile(file, [...sp, 'downwardAPI'], out);
      if (file.path) claim(file.path, file.path);
    }
    const token = s.serviceAccountToken;
    if (token) {
      const seconds = token.expirationSeconds ?? 0;
      const ep = [...sp, 'serviceAccountToken', 'expirationSeconds'];
      if (seconds < MIN_TOKEN_SECONDS)
        out.push(invalid(ep, seconds, 'may not specify a duration less than 10 minutes'));
      if (seconds > MAX_TOKEN_SECONDS)
        out.push(invalid(ep, seconds, 'may not specify a duration larger than 2^32 seconds'));
      if (!token.path) out.push(required([...p, 'path']));
      else localNonReservedPath([...p, 'path'], token.path, out);
    }
    if (s.clusterTrustBundle) {
      clusterTrustBundle(s.clusterTrustBundle, [...sp, 'clusterTrustBundle'], out);
      claim(s.clusterTrustBundle.path ?? '', s.clusterTrustBundle.path ?? '');
    }
    const cert = rec.podCertificate as PodCertificateProjection | undefined;
    if (cert) podCertificate(cert, [...sp, 'podCertificate'], (path) => claim(path, path), out);
    if (kinds.length > 1) out.push(forbidden(sp, 'may not specify more than 1 volume type per source'));
  });
}
