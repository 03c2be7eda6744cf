// Where the kubelet API's serving certificate comes from, as the kubelet decides it:
// - tlsCertFile and tlsPrivateKeyFile when configured (re-read when they change on disk);
// - else, with serverTLSBootstrap, a `kubernetes.io/kubelet-serving` certificate from the API server,
//   served as soon as it is issued and rotated like the client certificate (serving-bootstrap.ts);
// - else a self-signed pair in <cert-dir>/kubelet.crt and kubelet.key, made once and kept.
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseCertificatePair } from '../../apiserver/credentials/certificate-pair.js';
import type { Logger } from '../../log/logger.js';
import { generateSelfSignedCertKey } from './self-signed-certificate.js';
import { errorMessage } from '../../util/error-message.js';

export interface ServingPair {
  readonly cert: string;
  readonly key: string;
}

export interface ServingCertificateSource {
  /** The pair to serve with; undefined while there is none yet. */
  current(): ServingPair | undefined;
  /** Why there is none (for the one log line while waiting). */
  waiting(): string;
  /**
   * While a pair is being made here (not waiting on anyone else): settles once it is made or has
   * failed. A listener waits for it instead of reporting a failure; undefined otherwise.
   */
  making?(): Promise<void> | undefined;
  /** Called with each new pair. */
  onChange(listener: () => void): void;
  /** Look at files again (called on new connections, at most once a minute): no timer runs for it. */
  recheck(): void;
  stop(): Promise<void>;
}

const RECHECK_MS = 60_000;

function signature(files: string[]): string {
  return files
    .map((f) => {
      try {
        const s = statSync(f);
        return `${s.ino}:${s.size}:${s.mtimeMs}`;
      } catch {
        return 'missing';
      }
    })
    .join('|');
}

/** A pair read from two files (they may be one), checked as tls.LoadX509KeyPair does. */
export class FileServingCertificate implements ServingCertificateSource {
  private pair: ServingPair | undefined;
  private problem = 'not read yet';
  private seen = '';
  private checkedAt = 0;
  private readonly listeners: (() => void)[] = [];

  constructor(
    private readonly certFile: string,
    private readonly keyFile: string,
    private readonly logger: Logger,
  ) {
    this.load();
  }

  current(): ServingPair | undefined {
    // Until a first pair loads, every bind attempt looks again (the files may be written late).
    if (!this.pair) this.load();
    return this.pair;
  }
  waiting(): string {
    return `the serving certificate ${this.certFile} cannot be used: ${this.problem}; fix tlsCertFile/tlsPrivateKeyFile (--tls-cert-file, --tls-private-key-file)`;
  }
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }
  recheck(): void {
    if (Date.now() - this.checkedAt < RECHECK_MS) return;
    this.load();
  }
  stop(): Promise<void> {
    return Promise.resolve();
  }

  private load(): void {
    this.checkedAt = Date.now();
    const sig = signature([this.certFile, this.keyFile]);
    if (sig === this.seen) return;
    this.seen = sig;
    let next: ServingPair;
    try {
      const p = parseCertificatePair(readFileSync(this.certFile), readFileSync(this.keyFile));
      next = { cert: p.certPem, key: p.keyPem };
    } catch (e) {
      this.problem = (e as NodeJS.ErrnoException).code ?? errorMessage(e);
      if (this.pair)
        this.logger.warn('Serving certificate on disk is not usable; keeping the one in use', {
          certFile: this.certFile,
          err: this.problem,
        });
      return;
    }
    const changed = this.pair !== undefined;
    this.pair = next;
    if (changed) {
      this.logger.info('Serving certificate changed on disk; new connections use it', { certFile: this.certFile });
      for (const l of this.listeners) l();
    }
  }
}

/**
 * InitializeTLS without certificate files: <cert-dir>/kubelet.crt and kubelet.key, used when both
 * can be read, else made (certutil.GenerateSelfSignedCertKey for the node's name; bootlet adds the
 * node IP as a SAN, so that a client given the CA can check an address too).
 */
export class SelfSignedServingCertificate implements ServingCertificateSource {
  private pair: ServingPair | undefined;
  private problem = 'being generated';
  private generating = false;
  private readonly listeners: (() => void)[] = [];
  readonly certFile: string;
  readonly keyFile: string;
  readonly ready: Promise<void>;

  constructor(certDir: string, host: string, nodeIP: string, logger: Logger) {
    this.certFile = join(certDir, 'kubelet.crt');
    this.keyFile = join(certDir, 'kubelet.key');
    try {
      const p = parseCertificatePair(readFileSync(this.certFile), readFileSync(this.keyFile));
      this.pair = { cert: readFileSync(this.certFile, 'utf8'), key: p.keyPem };
      this.ready = Promise.resolve();
      return;
    } catch {
      // CanReadCertAndKey is false: make a new pair.
    }
    this.generating = true;
    this.ready = generateSelfSignedCertKey(host, {
      dnsNames: [],
      ipAddresses: nodeIP && nodeIP !== host ? [nodeIP] : [],
    })
      .then((made) => {
        mkdirSync(dirname(this.certFile), { recursive: true, mode: 0o755 });
        writeFileSync(this.keyFile, made.keyPem, { mode: 0o600 });
        writeFileSync(this.certFile, made.certPem, { mode: 0o644 });
        this.pair = { cert: made.certPem, key: made.keyPem };
        logger.info('Generated a self-signed serving certificate', {
          certFile: this.certFile,
          keyFile: this.keyFile,
          host,
        });
        for (const l of this.listeners) l();
      })
      .catch((e: unknown) => {
        this.problem = errorMessage(e);
        logger.error('Cannot make the self-signed serving certificate; the kubelet API is not served', {
          certFile: this.certFile,
          err: this.problem,
        });
      })
      .finally(() => (this.generating = false));
  }

  making(): Promise<void> | undefined {
    return this.generating ? this.ready : undefined;
  }

  current(): ServingPair | undefined {
    return this.pair;
  }
  waiting(): string {
    return `no self-signed serving certificate in ${this.certFile}: ${this.problem}`;
  }
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }
  recheck(): void {}
  async stop(): Promise<void> {
    await this.ready;
  }
}
