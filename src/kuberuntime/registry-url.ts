// Registry locations read as the kubelet's keyring reads them: Go's url.Parse of "https://" + the
// location (fragment, query and user info dropped, the host checked, the path unescaped), then
// net.SplitHostPort of the host and its labels split on '.'. What url.Parse refuses is undefined
// here (the keyring ignores such an entry, and an image so named matches no key).

export interface SchemelessURL {
  /** As url.URL.Host: `reg.example.com:5000`, `[::1]:5000`. */
  readonly host: string;
  /** As url.URL.Path: unescaped, '' when there is none. */
  readonly path: string;
}

// A control character anywhere: "net/url: invalid control character in URL".
const CONTROL = /[\x00-\x1f\x7f]/;
/** ASCII a host may hold unescaped (shouldEscape's encodeHost exceptions); bytes ≥ 0x80 pass too. */
const HOST_CHARS = /^[A-Za-z0-9\-_.~!$&'()*+,;=:[\]<>"\u0080-\uffff]*$/;
const USERINFO_CHARS = /^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/;
const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;

function validOptionalPort(colonPort: string): boolean {
  return colonPort === '' || /^:\d*$/.test(colonPort);
}

/** parseHost: the port after the last ':' (or after ']') must be digits; no '%' (escapes in a host are left out). */
function validHost(host: string): boolean {
  if (host.startsWith('[')) {
    const close = host.lastIndexOf(']');
    if (close < 0 || !validOptionalPort(host.slice(close + 1))) return false;
  } else {
    const colon = host.lastIndexOf(':');
    if (colon !== -1 && !validOptionalPort(host.slice(colon))) return false;
  }
  return HOST_CHARS.test(host);
}

function unescapePath(path: string): string | undefined {
  if (BAD_ESCAPE.test(path)) return undefined;
  if (!path.includes('%')) return path;
  const bytes: number[] = [];
  for (let i = 0; i < path.length; i++) {
    if (path[i] === '%') {
      bytes.push(parseInt(path.slice(i + 1, i + 3), 16));
      i += 2;
    } else for (const b of Buffer.from(path[i]!, 'utf8')) bytes.push(b);
  }
  return Buffer.from(bytes).toString('utf8');
}

/** url.Parse("https://" + s) with the scheme cleared (parseSchemelessUrl); undefined where it fails. */
export function parseSchemelessURL(s: string): SchemelessURL | undefined {
  if (CONTROL.test(s)) return undefined;
  let rest = s;
  const hash = rest.indexOf('#');
  if (hash !== -1) {
    if (BAD_ESCAPE.test(rest.slice(hash + 1))) return undefined;
    rest = rest.slice(0, hash);
  }
  const question = rest.indexOf('?');
  if (question !== -1) rest = rest.slice(0, question);
  const slash = rest.indexOf('/');
  const authority = slash === -1 ? rest : rest.slice(0, slash);
  const rawPath = slash === -1 ? '' : rest.slice(slash);
  const at = authority.lastIndexOf('@');
  if (at !== -1 && !USERINFO_CHARS.test(authority.slice(0, at))) return undefined;
  const host = at === -1 ? authority : authority.slice(at + 1);
  if (!validHost(host)) return undefined;
  const path = unescapePath(rawPath);
  return path === undefined ? undefined : { host, path };
}

/** A location's key in the keyring (BasicDockerKeyring.Add): host, plus the path unless it is `/`, `/v1/` or `/v2/`. */
export function registryKey(location: string): string | undefined {
  const value = /^https?:\/\//.test(location) ? location.replace(/^https?:\/\//, '') : location;
  const u = parseSchemelessURL(value);
  if (!u) return undefined;
  let path = u.path;
  if (path.startsWith('/v2/') || path.startsWith('/v1/')) path = path.slice(3);
  return path.length > 0 && path !== '/' ? u.host + path : u.host;
}

/** net.SplitHostPort; undefined where it fails (no port, too many colons, a stray bracket). */
function splitHostPort(hostport: string): { host: string; port: string } | undefined {
  const colon = hostport.lastIndexOf(':');
  if (colon < 0) return undefined;
  let host: string;
  let j = 0;
  let k = 0;
  if (hostport.startsWith('[')) {
    const close = hostport.indexOf(']');
    // The first ']' must stand just before the last ':'.
    if (close < 0 || close + 1 !== colon) return undefined;
    host = hostport.slice(1, close);
    j = 1;
    k = close + 1;
  } else {
    host = hostport.slice(0, colon);
    if (host.includes(':')) return undefined;
  }
  if (hostport.indexOf('[', j) !== -1 || hostport.indexOf(']', k) !== -1) return undefined;
  return { host, port: hostport.slice(colon + 1) };
}

/** splitUrl: the host's labels and its port ('' when it has none). */
export function hostLabels(u: SchemelessURL): { labels: string[]; port: string } {
  const hp = splitHostPort(u.host);
  return hp ? { labels: hp.host.split('.'), port: hp.port } : { labels: u.host.split('.'), port: '' };
}
