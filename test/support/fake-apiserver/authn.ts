import type { TLSSocket } from 'node:tls';

export interface UserInfo {
  name: string;
  groups: string[];
}

/** A bearer token's user; issued service account tokens also say when they stop being valid. */
export interface TokenEntry extends UserInfo {
  uid?: string;
  extra?: Record<string, string[]>;
  audiences?: string[];
  /** False once the token expired or what it is bound to is gone (the service account token validator). */
  valid?: () => boolean;
}

export type TokenTable = Map<string, TokenEntry>;

/** The server's --api-audiences (kubeadm's issuer): what a bearer token must be meant for. */
export const API_AUDIENCES: readonly string[] = ['https://kubernetes.default.svc.cluster.local'];

/**
 * The entry of a token that still authenticates for one of the audiences (the server's own unless a
 * TokenReview names others); tokens without audiences (static and bootstrap tokens) serve any.
 */
export function lookupToken(
  tokens: TokenTable,
  token: string,
  audiences: readonly string[] = API_AUDIENCES,
): TokenEntry | undefined {
  const entry = tokens.get(token);
  if (!entry || (entry.valid && !entry.valid())) return undefined;
  if (entry.audiences && !entry.audiences.some((a) => audiences.includes(a))) return undefined;
  return entry;
}

/** Client certificate (verified against the CA by TLS: CN = user, O = groups) or bearer token. */
export function authenticate(
  socket: TLSSocket | undefined,
  authorization: string | undefined,
  tokens: TokenTable,
): UserInfo | undefined {
  if (authorization?.startsWith('Bearer ')) {
    const user = lookupToken(tokens, authorization.slice('Bearer '.length).trim());
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
  return {
    name: u.name,
    groups: u.groups.includes('system:authenticated') ? u.groups : [...u.groups, 'system:authenticated'],
  };
}

const NODE_PREFIX = 'system:node:';

/** The node name of a kubelet identity, as nodeidentifier.NodeIdentity reads it. */
export function nodeIdentity(u: UserInfo): { isNode: boolean; nodeName: string } {
  if (!u.groups.includes('system:nodes')) return { isNode: false, nodeName: '' };
  if (!u.name.startsWith(NODE_PREFIX)) return { isNode: false, nodeName: '' };
  return { isNode: true, nodeName: u.name.slice(NODE_PREFIX.length) };
}
