// Service account tokens as kube-apiserver's JWT issuer writes them: ES256 over a key of the fake's
// own (--service-account-signing-key-file), the key id as the SHA-256 of the public key's DER in
// base64url, and the claims of pkg/serviceaccount (iss, sub, aud, exp, iat, nbf, jti, kubernetes.io).
import { createHash, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';

export interface ObjectRef {
  name: string;
  uid: string;
}

export interface ServiceAccountClaims {
  iss: string;
  sub: string;
  aud: string[];
  exp: number;
  iat: number;
  nbf: number;
  jti: string;
  'kubernetes.io': {
    namespace: string;
    serviceaccount: ObjectRef;
    pod?: ObjectRef;
    secret?: ObjectRef;
    node?: { name: string; uid?: string };
    warnafter?: number;
  };
}

const b64url = (b: Buffer | string): string => Buffer.from(b).toString('base64url');

export class ServiceAccountKey {
  private readonly privateKey: KeyObject;
  readonly publicKeyPem: string;
  readonly keyId: string;

  constructor() {
    const pair = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    this.privateKey = pair.privateKey;
    this.publicKeyPem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    this.keyId = b64url(
      createHash('sha256')
        .update(pair.publicKey.export({ type: 'spki', format: 'der' }))
        .digest(),
    );
  }

  sign(claims: ServiceAccountClaims): string {
    const header = b64url(JSON.stringify({ alg: 'ES256', kid: this.keyId }));
    const body = b64url(JSON.stringify(claims));
    const signature = sign('sha256', Buffer.from(`${header}.${body}`), {
      key: this.privateKey,
      dsaEncoding: 'ieee-p1363',
    });
    return `${header}.${body}.${b64url(signature)}`;
  }

  /** The claims of a token this key signed, or undefined (bad form or signature); times are not checked here. */
  verify(token: string): ServiceAccountClaims | undefined {
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    try {
      const ok = verify(
        'sha256',
        Buffer.from(`${parts[0]}.${parts[1]}`),
        { key: createPublicKey(this.publicKeyPem), dsaEncoding: 'ieee-p1363' },
        Buffer.from(parts[2], 'base64url'),
      );
      return ok ? (JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as ServiceAccountClaims) : undefined;
    } catch {
      return undefined;
    }
  }
}
