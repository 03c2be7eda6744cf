// Client certificates verified against authentication.x509.clientCAFile (the x509 request
// authenticator): TLS has checked the chain against the CA bundle at the handshake; here, on every
// request, the certificate must still be valid and usable for client auth. CN is the user name, each
// O a group. A certificate that does not verify is an error (401), never anonymous.
import type { TLSSocket } from 'node:tls';
import type { UserInfo } from './user.js';
import { errorMessage } from '../../util/error-message.js';
import { subjectFields } from '../../util/x509-subject.js';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_EXTENDED_KEY_USAGE = '2.5.29.37.0';

export type CertificateResult = { user: UserInfo } | { error: string } | undefined;

/** undefined: no client certificate presented. */
export function authenticateCertificate(socket: TLSSocket, now: number = Date.now()): CertificateResult {
  const cert = socket.getPeerX509Certificate();
  if (!cert) return undefined;
  const subject = subjectFields(cert.subject);
  const who = subject.CN?.[0] ?? '';
  if (!socket.authorized) {
    const why = errorMessage(socket.authorizationError ?? 'not verified');
    return { error: `verifying certificate CN=${who} failed: ${why}` };
  }
  if (now < Date.parse(cert.validFrom) || now > Date.parse(cert.validTo))
    return { error: `certificate CN=${who} is not valid now (valid ${cert.validFrom} to ${cert.validTo})` };
  const usages = cert.keyUsage;
  if (usages && !usages.includes(CLIENT_AUTH) && !usages.includes(ANY_EXTENDED_KEY_USAGE))
    return { error: `certificate CN=${who} is not for client authentication` };
  if (!who) return { error: 'certificate has no common name' };
  return { user: { name: who, groups: subject.O ?? [] } };
}
