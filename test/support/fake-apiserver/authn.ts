import type { TLSSocket } from 'node:tls';

export interface UserInfo {
  name: string;
  groups: string[];
}

export type TokenTable = Map<string, UserInfo>;

/** Client certificate (verified against the CA by TLS: CN = user, O = groups) or bearer token. */
export function authenticate(
  socket: TLSSocket | undefined,
  authorization: string | undefined,
  tokens: TokenTable,
): UserInfo | undefined {
  if (authorization?.startsWith('Bearer ')) {
    const user = tokens.get(authorization.slice('Bearer '.length).trim());
    // An unknown token falls through to the certificate, as the union authenticator tries each in turn.
    if (user) return withAuthenticated(user);
  }
  if (socket?.authorized) {
    const cert = socket.getPeerCertificate();
    // The x509 authenticator checks validity on every request, not only at the handshake.
    const now = Date.now();
    if (cert && (Date.parse(cert.valid_to) < now || Date.parse(cert.valid_from) > now)) return undefined;
    const subject = cert?.subject as unknown as Record<string, string | string[] | undefined> | undefined;
    const cn = subject?.CN;
    const o = subject?.O;
    const name = Array.isArray(cn) ? cn[0] : cn;
    if (name) {
      const groups = o === undefined ? [] : Array.isArray(o) ? o : [o];
      return withAuthenticated({ name, groups });
    }
  }
  return undefined;
}

function withAuthenticated(u: UserInfo): UserInfo {
  return { name: u.name, groups: u.groups.includes('system:authenticated') ? u.groups : [...u.groups, 'system:authenticated'] };
}

const NODE_PREFIX = 'system:node:';

/** The node name of a kubelet identity, as nodeidentifier.NodeIdentity reads it. */
export function nodeIdentity(u: UserInfo): { isNode: boolean; nodeName: string } {
  if (!u.groups.includes('system:nodes')) return { isNode: false, nodeName: '' };
  if (!u.name.startsWith(NODE_PREFIX)) return { isNode: false, nodeName: '' };
  return { isNode: true, nodeName: u.name.slice(NODE_PREFIX.length) };
}
