// Who is asking, as the kubelet's request authenticator decides it (BuildAuthn): a client
// certificate (when a client CA is configured), then a bearer token through TokenReview (when the
// webhook is enabled); the first that succeeds wins. When neither identifies the caller and neither
// failed, the caller is system:anonymous if anonymous auth is enabled; a failure is never anonymous,
// and a token TokenReview does not accept is a failure (401), as the kubelet's union with
// FailOnError makes it.
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { authenticateCertificate } from './x509-authenticator.js';
import type { TokenReviewAuthenticator } from './token-review.js';
import { ANONYMOUS, withAuthenticatedGroup, type UserInfo } from './user.js';
import { errorMessage } from '../../util/error-message.js';

/** What k8s.io/apiserver's bearer token authenticator says of a token the webhook did not accept. */
export const INVALID_BEARER_TOKEN = 'invalid bearer token';

export type AuthnResult = { user: UserInfo } | { error: string } | { unauthenticated: true };

export interface AuthenticatorOptions {
  /** Client certificates are only looked at when a client CA is configured. */
  x509: boolean;
  tokens: TokenReviewAuthenticator | undefined;
  anonymous: boolean;
}

function bearerToken(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m?.[1];
}

export class RequestAuthenticator {
  constructor(private readonly o: AuthenticatorOptions) {}

  async authenticate(req: IncomingMessage): Promise<AuthnResult> {
    const errors: string[] = [];
    if (this.o.x509) {
      const r = authenticateCertificate(req.socket as TLSSocket);
      if (r && 'user' in r) return { user: withAuthenticatedGroup(r.user) };
      if (r) errors.push(r.error);
    }
    const token = bearerToken(req);
    if (token !== undefined && this.o.tokens) {
      try {
        const user = await this.o.tokens.authenticate(token);
        if (user) return { user: withAuthenticatedGroup(user) };
        // The bearer token authenticator's "no" is an error (errInvalidToken), and the chain stops at an error.
        errors.push(INVALID_BEARER_TOKEN);
      } catch (e) {
        errors.push(`token review failed: ${errorMessage(e)}`);
      }
    }
    if (errors.length > 0) return { error: errors.join('; ') };
    if (this.o.anonymous) return { user: ANONYMOUS };
    return { unauthenticated: true };
  }
}
