// Registry credentials from a pod's imagePullSecrets, found as the kubelet's keyring finds them
// (pkg/credentialprovider keyring.go, config.go, secrets/secrets.go): `kubernetes.io/dockerconfigjson`
// (`.dockerconfigjson`, `{"auths": {...}}`) and `kubernetes.io/dockercfg` (`.dockercfg`, the bare
// map) give registry → entry; an entry's `auth` (base64 `user:pass`) wins over username/password.
// A lookup returns every credential whose registry matches the image, most specific key first.
// Nothing here logs: credentials never leave this module except toward the runtime.
import type { Secret } from 'kubernetes-types/core/v1';
import { compileFilepathPattern, filepathMatches, type FilepathPattern } from './filepath-match.js';
import { hostLabels, parseSchemelessURL, registryKey } from './registry-url.js';

export const SECRET_TYPE_DOCKER_CONFIG_JSON = 'kubernetes.io/dockerconfigjson';
export const DOCKER_CONFIG_JSON_KEY = '.dockerconfigjson';
export const SECRET_TYPE_DOCKERCFG = 'kubernetes.io/dockercfg';
export const DOCKERCFG_KEY = '.dockercfg';

/** Docker Hub's credentials are kept under this key; images of docker.io fall back to it. */
const DEFAULT_REGISTRY_HOST = 'index.docker.io';
/**
 * Bounds of bootlet's own (the kubelet has none): a registry key is matched in up to key length ×
 * image length steps, so keys, their number and the names they are matched against are capped. A
 * secret beyond them fails the pull naming it; a longer repository name is docker's ErrNameTooLong
 * and matches no key.
 */
export const MAX_REGISTRY_LOCATION_LENGTH = 512;
export const MAX_REGISTRY_KEYS = 128;
const MAX_REPOSITORY_LENGTH = 255;

export interface RegistryCredential {
  readonly username: string;
  readonly password: string;
  readonly email?: string;
  readonly identityToken?: string;
}

/** Registry location → credential, one pull secret's worth. */
export type DockerConfig = ReadonlyMap<string, RegistryCredential>;

export class PullSecretError extends Error {
  override name = 'PullSecretError';
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function entryFrom(raw: unknown, where: string): RegistryCredential {
  const e = (raw !== null && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  let username = str(e.username);
  let password = str(e.password);
  const auth = str(e.auth);
  if (auth !== '') {
    const decoded = Buffer.from(auth, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    // The message names where, never what: the field holds the password.
    if (colon === -1) throw new PullSecretError(`${where}: unable to parse auth field`);
    username = decoded.slice(0, colon);
    password = decoded.slice(colon + 1);
  }
  const email = str(e.email);
  const identityToken = str(e.identitytoken);
  return { username, password, ...(email ? { email } : {}), ...(identityToken ? { identityToken } : {}) };
}

function configFrom(map: unknown, where: string): Map<string, RegistryCredential> {
  const out = new Map<string, RegistryCredential>();
  if (map === null || typeof map !== 'object' || Array.isArray(map)) return out;
  for (const [loc, raw] of Object.entries(map as Record<string, unknown>)) {
    // Matching costs up to key length x image length: a longer key is refused, not matched.
    if (loc.length > MAX_REGISTRY_LOCATION_LENGTH)
      throw new PullSecretError(
        `${where}: registry ${JSON.stringify(loc.slice(0, 64) + '...')} is longer than ${MAX_REGISTRY_LOCATION_LENGTH} characters`,
      );
    out.set(loc, entryFrom(raw, `${where} ${JSON.stringify(loc)}`));
  }
  return out;
}

function parseJSON(b64: string, where: string): unknown {
  try {
    return JSON.parse(Buffer.from(b64, 'base64').toString('utf8'));
  } catch {
    throw new PullSecretError(`${where} is not valid JSON`);
  }
}

function secretName(secret: Secret): string {
  return `secret ${secret.metadata?.namespace ?? ''}/${secret.metadata?.name ?? ''}`;
}

/** The secret's registry credentials; undefined when it is not a docker config secret (the kubelet ignores it). */
export function dockerConfigFromSecret(secret: Secret): DockerConfig | undefined {
  const where = secretName(secret);
  const json = secret.data?.[DOCKER_CONFIG_JSON_KEY];
  if (secret.type === SECRET_TYPE_DOCKER_CONFIG_JSON && json) {
    const doc = parseJSON(json, `${where} ${DOCKER_CONFIG_JSON_KEY}`);
    return configFrom((doc as { auths?: unknown } | null)?.auths, where);
  }
  const cfg = secret.data?.[DOCKERCFG_KEY];
  if (secret.type === SECRET_TYPE_DOCKERCFG && cfg)
    return configFrom(parseJSON(cfg, `${where} ${DOCKERCFG_KEY}`), where);
  return undefined;
}

/** A key as lookups use it: its host labels compiled once (undefined: a malformed glob), port and path. */
interface CompiledKey {
  readonly labels: readonly (FilepathPattern | undefined)[];
  readonly port: string;
  readonly path: string;
}

function compileKey(key: string): CompiledKey | undefined {
  const u = parseSchemelessURL(key);
  if (!u) return undefined;
  const { labels, port } = hostLabels(u);
  return { labels: labels.map(compileFilepathPattern), port, path: u.path };
}

interface Target {
  readonly labels: readonly string[];
  readonly port: string;
  readonly path: string;
}

function targetOf(image: string): Target | undefined {
  if (image.length > MAX_REPOSITORY_LENGTH) return undefined;
  const u = parseSchemelessURL(image);
  return u && { ...hostLabels(u), path: u.path };
}

/** urlsMatch: same port, same number of host labels each matching its glob, the key's path a prefix of the image's. */
function keyMatches(k: CompiledKey, t: Target): boolean {
  if (k.port !== t.port || k.labels.length !== t.labels.length || !t.path.startsWith(k.path)) return false;
  return k.labels.every((g, i) => g !== undefined && filepathMatches(g, t.labels[i]!));
}

/** Whether a registry key matches an image repository, as the kubelet's keyring decides it. */
export function registryMatches(key: string, image: string): boolean {
  const k = compileKey(key);
  const t = targetOf(image);
  return k !== undefined && t !== undefined && keyMatches(k, t);
}

/** Whether the image comes from Docker Hub, judged from its name as docker does. */
function isDefaultRegistryMatch(image: string): boolean {
  const slash = image.indexOf('/');
  if (slash === 0 || image === '') return false;
  if (slash === -1) return true;
  const first = image.slice(0, slash);
  if (first === 'docker.io' || first === 'index.docker.io') return true;
  return !/[.:]/.test(first);
}

/**
 * The repository an image reference names, normalized as docker's ParseNormalizedNamed does
 * (`busybox` → `docker.io/library/busybox`), without tag or digest: what the keyring is asked about.
 */
export function imageRepository(image: string): string {
  let name = image;
  const at = name.indexOf('@');
  if (at !== -1) name = name.slice(0, at);
  const lastSlash = name.lastIndexOf('/');
  const colon = name.lastIndexOf(':');
  if (colon > lastSlash) name = name.slice(0, colon);
  const slash = name.indexOf('/');
  const first = slash === -1 ? '' : name.slice(0, slash);
  if (slash === -1 || (!/[.:]/.test(first) && first !== 'localhost' && first.toLowerCase() === first)) {
    const rest = slash === -1 ? `library/${name}` : name;
    return `docker.io/${rest}`;
  }
  return name;
}

/** BasicDockerKeyring: every pull secret's entries under their keys, looked up most specific key first. */
export class DockerKeyring {
  private readonly creds = new Map<string, RegistryCredential[]>();
  private index: { readonly key: string; readonly compiled: CompiledKey | undefined }[] = [];

  /** Adds one secret's entries; an entry whose location url.Parse refuses is left out, as the kubelet does. */
  add(config: DockerConfig, where = 'pull secret'): void {
    for (const [loc, cred] of config) {
      const key = registryKey(loc);
      if (key === undefined) continue;
      const list = this.creds.get(key) ?? [];
      list.push(cred);
      this.creds.set(key, list);
      if (this.creds.size > MAX_REGISTRY_KEYS)
        throw new PullSecretError(
          `${where}: the pod's pull secrets name more than ${MAX_REGISTRY_KEYS} registries; bootlet matches at most that many`,
        );
    }
    // Reverse order puts quay.io/coreos before quay.io, so the more specific credential is tried first.
    const known = new Map(this.index.map((e) => [e.key, e.compiled]));
    this.index = [...this.creds.keys()]
      .sort()
      .reverse()
      .map((key) => ({ key, compiled: known.has(key) ? known.get(key) : compileKey(key) }));
  }

  /** Every matching credential in order; for a Docker Hub image with none, Docker Hub's. */
  lookup(image: string): RegistryCredential[] {
    const out: RegistryCredential[] = [];
    const target = targetOf(image);
    if (target)
      for (const { key, compiled } of this.index)
        if (compiled && keyMatches(compiled, target)) out.push(...this.creds.get(key)!);
    if (out.length > 0) return out;
    return isDefaultRegistryMatch(image) ? [...(this.creds.get(DEFAULT_REGISTRY_HOST) ?? [])] : [];
  }
}

/** MakeDockerKeyring over the pod's pull secrets, in their order; one that is not valid JSON fails the pull. */
export function keyringFromSecrets(secrets: readonly Secret[]): DockerKeyring {
  const ring = new DockerKeyring();
  for (const s of secrets) {
    const cfg = dockerConfigFromSecret(s);
    if (cfg) ring.add(cfg, secretName(s));
  }
  return ring;
}
