// tlsCipherSuites (--tls-cipher-suites) as the kubelet reads it: Go's cipher suite names
// (crypto/tls CipherSuites and InsecureCipherSuites, plus component-base's two legacy CHACHA20
// names), each mapped to its OpenSSL name. As in Go, the list configures TLS 1.0-1.2 only: TLS 1.3
// names are accepted and TLS 1.3 always offers its three suites. A name Go does not know is refused
// in the kubelet's words; one Go knows but this OpenSSL cannot serve (RC4, 3DES) is refused too,
// rather than dropped.
import { DEFAULT_CIPHERS, getCiphers } from 'node:tls';

interface GoCipherSuite {
  /** OpenSSL's name; undefined for the TLS 1.3 suites, which Go does not let a list configure. */
  readonly openssl: string | undefined;
  readonly insecure: boolean;
}

const secure = (openssl: string | undefined): GoCipherSuite => ({ openssl, insecure: false });
const insecure = (openssl: string): GoCipherSuite => ({ openssl, insecure: true });

const GO_CIPHER_SUITES: ReadonlyMap<string, GoCipherSuite> = new Map([
  ['TLS_AES_128_GCM_SHA256', secure(undefined)],
  ['TLS_AES_256_GCM_SHA384', secure(undefined)],
  ['TLS_CHACHA20_POLY1305_SHA256', secure(undefined)],
  ['TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA', secure('ECDHE-ECDSA-AES128-SHA')],
  ['TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA', secure('ECDHE-ECDSA-AES256-SHA')],
  ['TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', secure('ECDHE-RSA-AES128-SHA')],
  ['TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA', secure('ECDHE-RSA-AES256-SHA')],
  ['TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', secure('ECDHE-ECDSA-AES128-GCM-SHA256')],
  ['TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', secure('ECDHE-ECDSA-AES256-GCM-SHA384')],
  ['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', secure('ECDHE-RSA-AES128-GCM-SHA256')],
  ['TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', secure('ECDHE-RSA-AES256-GCM-SHA384')],
  ['TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256', secure('ECDHE-RSA-CHACHA20-POLY1305')],
  ['TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256', secure('ECDHE-ECDSA-CHACHA20-POLY1305')],
  ['TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305', secure('ECDHE-RSA-CHACHA20-POLY1305')],
  ['TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305', secure('ECDHE-ECDSA-CHACHA20-POLY1305')],
  ['TLS_RSA_WITH_RC4_128_SHA', insecure('RC4-SHA')],
  ['TLS_RSA_WITH_3DES_EDE_CBC_SHA', insecure('DES-CBC3-SHA')],
  ['TLS_RSA_WITH_AES_128_CBC_SHA', insecure('AES128-SHA')],
  ['TLS_RSA_WITH_AES_256_CBC_SHA', insecure('AES256-SHA')],
  ['TLS_RSA_WITH_AES_128_CBC_SHA256', insecure('AES128-SHA256')],
  ['TLS_RSA_WITH_AES_128_GCM_SHA256', insecure('AES128-GCM-SHA256')],
  ['TLS_RSA_WITH_AES_256_GCM_SHA384', insecure('AES256-GCM-SHA384')],
  ['TLS_ECDHE_ECDSA_WITH_RC4_128_SHA', insecure('ECDHE-ECDSA-RC4-SHA')],
  ['TLS_ECDHE_RSA_WITH_RC4_128_SHA', insecure('ECDHE-RSA-RC4-SHA')],
  ['TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA', insecure('ECDHE-RSA-DES-CBC3-SHA')],
  ['TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256', insecure('ECDHE-ECDSA-AES128-SHA256')],
  ['TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', insecure('ECDHE-RSA-AES128-SHA256')],
]);

/** The TLS 1.3 part of Node's default list: what Go always offers for TLS 1.3. */
const TLS13_SUITES = DEFAULT_CIPHERS.split(':').filter((c) => c.startsWith('TLS_'));

/** Why the list cannot be served, in the kubelet's words where it has them (cliflag.TLSCipherSuites). */
export function cipherSuitesProblem(names: readonly string[]): string | undefined {
  const available = new Set(getCiphers());
  for (const name of names) {
    const suite = GO_CIPHER_SUITES.get(name);
    if (!suite) return `Cipher suite ${name} not supported or doesn't exist`;
    if (suite.openssl && !available.has(suite.openssl.toLowerCase()))
      return `Cipher suite ${name} (OpenSSL ${suite.openssl}) is not available in bootlet's TLS library`;
  }
  return undefined;
}

/** The names of the list's insecure suites, for the kubelet's "Use of insecure cipher detected." line. */
export function insecureCipherSuites(names: readonly string[]): string[] {
  return names.filter((n) => GO_CIPHER_SUITES.get(n)?.insecure);
}

/**
 * The OpenSSL cipher string for a checked list: its TLS 1.0-1.2 suites, then the TLS 1.3 suites.
 * A list of TLS 1.3 names alone leaves TLS 1.2 without a suite, as in Go: Node then serves TLS 1.3 only.
 */
export function opensslCiphers(names: readonly string[]): string {
  const tls12 = names.map((n) => GO_CIPHER_SUITES.get(n)?.openssl).filter((c): c is string => c !== undefined);
  return [...new Set(tls12), ...TLS13_SUITES].join(':');
}
