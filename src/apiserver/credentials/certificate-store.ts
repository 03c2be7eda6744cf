// The kubelet's certificate file store (client-go certificate.NewFileStore): each pair is written to
// `<dir>/<prefix>-<YYYY-MM-DD-HH-MM-SS>.pem`, certificates then key in one file (0600), and
// `<prefix>-current.pem` is a symlink to the pair in use. The link is switched by making
// `<prefix>-updated.pem` and renaming it over `-current.pem`, so a reader always finds a whole pair;
// an `-updated.pem` left by a crash between the two steps is finished at start (recover).
import {
  closeSync,
  existsSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  symlinkSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { parseCertificatePair, type CertificatePair } from './certificate-pair.js';
import { pemOf } from './pem.js';
import { systemClock, type Clock } from '../../util/clock.js';
import { errorMessage } from '../../util/error-message.js';

export class CertificateStoreError extends Error {
  override readonly name = 'CertificateStoreError';
}

export interface CertificateStoreOptions {
  /** `kubelet-client` (client certificates) or `kubelet-server` (serving). */
  pairNamePrefix: string;
  /** `--cert-dir`. */
  certDir: string;
  /** A pair named elsewhere (the kubeconfig's client-certificate/client-key), used when no -current.pem exists. */
  certFile?: string;
  keyFile?: string;
  clock?: Clock;
}

export interface PairFiles {
  certFile: string;
  keyFile: string;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** Go's "2006-01-02-15-04-05" in local time. */
export function pairTimestamp(d: Date): string {
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}-${pad(d.getHours())}-${pad(d.getMinutes())}-${pad(d.getSeconds())}`;
}

function isSymlink(path: string): boolean | undefined {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

export class CertificateStore {
  readonly certDir: string;
  readonly currentPath: string;
  private readonly updatedPath: string;
  private readonly clock: Clock;

  constructor(private readonly opts: CertificateStoreOptions) {
    this.certDir = resolve(opts.certDir);
    this.currentPath = join(this.certDir, `${opts.pairNamePrefix}-current.pem`);
    this.updatedPath = join(this.certDir, `${opts.pairNamePrefix}-updated.pem`);
    this.clock = opts.clock ?? systemClock;
  }

  /** Finishes a switch a crash interrupted: `-updated.pem` becomes `-current.pem`. */
  recover(): void {
    if (existsSync(this.currentPath)) return;
    const updated = isSymlink(this.updatedPath);
    if (updated === undefined) return;
    if (!updated) throw new CertificateStoreError(`expected ${this.updatedPath} to be a symlink but it is a file`);
    renameSync(this.updatedPath, this.currentPath);
  }

  /** The files that hold the pair in use, in the store's order of preference; undefined = none. */
  currentFiles(): PairFiles | undefined {
    if (existsSync(this.currentPath)) return { certFile: this.currentPath, keyFile: this.currentPath };
    const { certFile, keyFile } = this.opts;
    if (certFile && keyFile && existsSync(certFile) && existsSync(keyFile)) return { certFile, keyFile };
    const crt = join(this.certDir, `${this.opts.pairNamePrefix}.crt`);
    const key = join(this.certDir, `${this.opts.pairNamePrefix}.key`);
    if (existsSync(crt) && existsSync(key)) return { certFile: crt, keyFile: key };
    return undefined;
  }

  /** The pair in use; undefined when there is none. Throws CertificateStoreError when it is there but unusable. */
  current(): CertificatePair | undefined {
    const files = this.currentFiles();
    if (!files) return undefined;
    try {
      return parseCertificatePair(readFileSync(files.certFile), readFileSync(files.keyFile));
    } catch (e) {
      const where = files.certFile === files.keyFile ? files.certFile : `${files.certFile} and ${files.keyFile}`;
      throw new CertificateStoreError(`${where}: ${errorMessage(e)}`);
    }
  }

  /** Writes a new pair file and makes it current. Throws CertificateStoreError; the old pair stays current then. */
  update(certPem: string, keyPem: string): CertificatePair {
    let pair: CertificatePair;
    try {
      pair = parseCertificatePair(certPem, keyPem);
    } catch (e) {
      throw new CertificateStoreError(`refusing to store the new pair: ${errorMessage(e)}`);
    }
    const file = join(this.certDir, `${this.opts.pairNamePrefix}-${pairTimestamp(this.clock.now())}.pem`);
    try {
      mkdirSync(this.certDir, { recursive: true, mode: 0o755 });
      const fd = openSync(file, 'w', 0o600);
      try {
        writeSync(fd, pemOf(certPem, 'CERTIFICATE') + pair.keyPem);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      this.switchTo(file);
    } catch (e) {
      if (e instanceof CertificateStoreError) throw e;
      throw new CertificateStoreError(`cannot store ${file}: ${(e as NodeJS.ErrnoException).code ?? errorMessage(e)}`);
    }
    return pair;
  }

  private switchTo(file: string): void {
    if (isSymlink(this.currentPath) === false)
      throw new CertificateStoreError(`expected ${this.currentPath} to be a symlink but it is a file`);
    const updated = isSymlink(this.updatedPath);
    if (updated === false)
      throw new CertificateStoreError(`expected ${this.updatedPath} to be a symlink but it is a file`);
    if (updated) unlinkSync(this.updatedPath);
    symlinkSync(resolve(file), this.updatedPath);
    // rename(2) replaces the old link in one step: there is never a moment without -current.pem.
    renameSync(this.updatedPath, this.currentPath);
  }
}
