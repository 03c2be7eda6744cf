// Registry credentials from a pod's imagePullSecrets, found as the kubelet's keyring finds them
// (pkg/credentialprovider keyring.go, config.go, secrets/secrets.go): `kubernetes.io/dockerconfigjson`
// (`.dockerconfigjson`, `{"auths": {...}}`) and `kubernetes.io/dockercfg` (`.dockercfg`, the bare
// map) give registry → entry; an entry's `auth` (base64 `user:pass`) wins over username/password.
// A lookup returns every credential whose registry matches the image, most specific key first.
// Nothing here logs: credentials never leave this module except toward the runtime.
import type { Secret } from 'kubernetes-types/core/v1';

export const SECRET_TYPE_DOCKER_CONFIG_JSON = 'kubernetes.io/dockerconfigjson';
export const DOCKER_CONFIG_JSON_KEY = '.dockerconfigjson';
export const SECRET_TYPE_DOCKERCFG = 'kubernetes.io/dockercfg';
export const DOCKERCFG_KEY = '.dockercfg';

/** Docker Hub's credentials are kept under this key; images of docker.io fall back to it. */
const DEFAULT_REGISTRY_HOST = 'index.docker.io';

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
  for (const [loc, raw] of Object.entries(map as Record<string, unknown>))
    out.set(loc, entryFrom(raw, `${where} ${JSON.stringify(loc)}`));
  return out;
}

function parseJSON(b64: string, where: string): unknown {
  try {
    return JSON.parse(Buffer.from(b64, 'base64').toString('utf8'));
  } catch {
    throw new PullSecretError(`${where} is not valid JSON`);
  }
}

/** The secret's registry credentials; undefined when it is not a docker config secret (the kubelet ignores it). */
export function dockerConfigFromSecret(secret: Secret): DockerConfig | undefined {
  const where = `secret ${secret.metadata?.namespace ?? ''}/${secret.metadata?.name ?? ''}`;
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

interface SchemelessURL {
  host: string;
  path: string;
}

/** As url.Parse("https://" + s) splits it: host up to the first '/', the rest is the path. */
function parseSchemeless(s: string): SchemelessURL {
  const slash = s.indexOf('/');
  return slash === -1 ? { host: s, path: '' } : { host: s.slice(0, slash), path: s.slice(slash) };
}

/** The location a credential is filed under: scheme dropped, `/v1/` or `/v2/` meaning the host itself. */
function keyOf(location: string): string {
  const u = parseSchemeless(location.replace(/^https?:\/\//, ''));
  let path = u.path;
  if (path.startsWith('/v1/') || path.startsWith('/v2/')) path = path.slice(3);
  return path.length > 0 && path !== '/' ? u.host + path : u.host;
}

function splitHostPort(host: string): { parts: string[]; port: string } {
  const m = /^(.*):(\d*)$/.exec(host);
  const name = m && !m[1]!.includes(':') ? m[1]! : host;
  return { parts: name.split('.'), port: m && !m[1]!.includes(':') ? m[2]! : '' };
}

/** One host label against a glob label, as Go's filepath.Match: `*`, `?`, `[...]` (with `^` or `!`), `\` escapes. */
function globMatch(glob: string, target: string): boolean {
  let re = '^';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '\\' && i + 1 < glob.length) re += '\\' + glob[++i]!;
    else if (c === '[') {
      const close = glob.indexOf(']', i + 2);
      // A class that never closes matches nothing, as filepath.Match's ErrBadPattern makes it.
      if (close === -1) return false;
      let body = glob.slice(i + 1, close).replace(/\\/g, '\\\\');
      if (body.startsWith('^') || body.startsWith('!')) body = '^' + body.slice(1);
      re += `[${body}]`;
      i = close;
    } else re += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(re + '$').test(target);
}

/** URLsMatch: same port, same number of host labels each matching its glob, the key's path a prefix of the image's. */
export function registryMatches(key: string, image: string): boolean {
  const k = parseSchemeless(key);
  const t = parseSchemeless(image);
  const kh = splitHostPort(k.host);
  const th = splitHostPort(t.host);
  if (kh.port !== th.port || kh.parts.length !== th.parts.length) return false;
  if (!t.path.startsWith(k.path)) return false;
  return kh.parts.every((g, i) => globMatch(g, th.parts[i]!));
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
  private index: string[] = [];

  add(config: DockerConfig): void {
    for (const [loc, cred] of config) {
      const key = keyOf(loc);
      const list = this.creds.get(key) ?? [];
      list.push(cred);
      this.creds.set(key, list);
    }
    // Reverse order puts quay.io/coreos before quay.io, so the more specific credential is tried first.
    this.index = [...this.creds.keys()].sort().reverse();
  }

  /** Every matching credential in order; for a Docker Hub image with none, Docker Hub's. */
  lookup(image: string): RegistryCredential[] {
    const out: RegistryCredential[] = [];
    for (const key of this.index) if (registryMatches(key, image)) out.push(...this.creds.get(key)!);
    if (out.length > 0) return out;
    return isDefaultRegistryMatch(image) ? [...(this.creds.get(DEFAULT_REGISTRY_HOST) ?? [])] : [];
  }
}

/** MakeDockerKeyring over the pod's pull secrets, in their order; one that is not valid JSON fails the pull. */
export function keyringFromSecrets(secrets: readonly Secret[]): DockerKeyring {
  const ring = new DockerKeyring();
  for (const s of secrets) {
    const cfg = dockerConfigFromSecret(s);
    if (cfg) ring.add(cfg);
  }
  return ring;
}
