// The client certificate the API client presents, read from files that may change while bootlet
// runs: rotated by bootlet itself (it calls reload() at once) or replaced by an operator (noticed on
// the next request after `recheckMs`, as client-go re-reads certificate files). A pair that does not
// load is refused with one warning and the last good one stays in use.
import { statSync, readFileSync } from 'node:fs';
import type { Logger } from '../../log/logger.js';
import { parseCertificatePair, type CertificatePair } from './certificate-pair.js';
import type { PairFiles } from './certificate-store.js';
import { errorMessage } from '../../util/error-message.js';
import type { ClientCertificateSource, TlsKeyPair } from '../client/kubeconfig.js';

export interface ClientCertificateFilesOptions {
  /** The files of the pair in use (they may move, e.g. from the kubeconfig's files to -current.pem). */
  locate: () => PairFiles | undefined;
  logger: Logger;
  /** How often current() looks at the files; default 60 s. */
  recheckMs?: number;
  now?: () => number;
}

export class ClientCertificateFiles implements ClientCertificateSource {
  private pair: TlsKeyPair | undefined;
  private info: CertificatePair | undefined;
  private signature = '';
  private checkedAt = 0;
  private readonly listeners: ((pair: CertificatePair) => void)[] = [];
  private readonly recheckMs: number;
  private readonly now: () => number;

  constructor(private readonly opts: ClientCertificateFilesOptions) {
    this.recheckMs = opts.recheckMs ?? 60_000;
    this.now = opts.now ?? Date.now;
    this.reload();
  }

  current(): TlsKeyPair | undefined {
    if (this.now() - this.checkedAt >= this.recheckMs) this.reload();
    return this.pair;
  }

  /** The parsed pair in use (subject, validity), if any. */
  loaded(): CertificatePair | undefined {
    return this.info;
  }

  onChange(listener: (pair: CertificatePair) => void): void {
    this.listeners.push(listener);
  }

  /** Looks at the files now; true when a new pair was taken. */
  reload(): boolean {
    this.checkedAt = this.now();
    const files = this.opts.locate();
    const signature = files ? fileSignature(files) : 'none';
    if (signature === this.signature) return false;
    this.signature = signature;
    if (!files || signature.includes('missing')) {
      if (this.pair)
        this.opts.logger.warn('Client certificate files are gone; keeping the certificate in use', {
          files: files ? describe(files) : 'none',
        });
      return false;
    }
    let next: CertificatePair;
    try {
      next = parseCertificatePair(readFileSync(files.certFile), readFileSync(files.keyFile));
    } catch (e) {
      this.opts.logger.warn('Client certificate on disk is not usable; keeping the one in use', {
        files: describe(files),
        err: errorMessage(e),
      });
      return false;
    }
    const first = this.pair === undefined;
    this.pair = { cert: Buffer.from(next.certPem), key: Buffer.from(next.keyPem) };
    this.info = next;
    const fields = { file: describe(files), subject: next.commonName, notAfter: next.notAfter.toISOString() };
    if (first) this.opts.logger.v(2).info('Client certificate loaded', fields);
    else this.opts.logger.info('Client certificate changed on disk; new connections use it', fields);
    for (const l of this.listeners) l(next);
    return true;
  }
}

function describe(f: PairFiles): string {
  return f.certFile === f.keyFile ? f.certFile : `${f.certFile},${f.keyFile}`;
}

/** Changes whenever either file (followed through symlinks) is replaced or rewritten. */
function fileSignature(f: PairFiles): string {
  const one = (p: string): string => {
    try {
      const s = statSync(p);
      return `${p}:${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch {
      return `${p}:missing`;
    }
  };
  return `${one(f.certFile)}|${one(f.keyFile)}`;
}
