// Reads the kubeconfig bootlet authenticates with: current context → cluster and user. Only what a
// node agent needs (server, CA, client certificate, bearer token); TLS is always verified.
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse } from 'yaml';
import { errorMessage } from '../../util/error-message.js';

/** A kubeconfig that cannot be used: one line, made a start-up error by the caller. */
export class KubeconfigError extends Error {
  override readonly name = 'KubeconfigError';
}

export interface TlsKeyPair {
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** Where the API client takes its client certificate from, per new connection. */
export interface ClientCertificateSource {
  /** The pair for new connections: the same object until the pair changes; undefined = none. */
  current(): TlsKeyPair | undefined;
}

/** The connection a kubeconfig describes, with every file already read. */
export interface ClusterConnection {
  /** Base URL without a trailing slash: `https://10.0.0.1:6443`. */
  server: string;
  /** PEM bundle to verify the server with; undefined = the system roots. */
  ca?: Buffer;
  /** The file `ca` came from (`certificate-authority`), when it was not inline data. */
  caFile?: string;
  /** TLS server name to verify instead of the URL's host (`tls-server-name`). */
  tlsServerName?: string;
  cert?: Buffer;
  key?: Buffer;
  /** The files `cert` and `key` came from (`client-certificate`, `client-key`), when not inline data. */
  certFile?: string;
  keyFile?: string;
  /** Replaces cert/key when set: the pair to present on new connections, which may change while running. */
  clientCertificate?: ClientCertificateSource;
  /** Static bearer token (`token`). */
  token?: string;
  /** File re-read for the bearer token (`tokenFile`), as client-go does for rotated tokens. */
  tokenFile?: string;
  /** Where it came from, for messages. */
  source: string;
}

type Dict = Record<string, unknown>;

function isDict(v: unknown): v is Dict {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(d: Dict, key: string): string | undefined {
  const v = d[key];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** Finds `name` in a kubeconfig list of `{name, <field>: {...}}`. */
function named(doc: Dict, list: string, field: string, name: string, file: string): Dict {
  const items = doc[list];
  const found = Array.isArray(items) ? items.find((i): i is Dict => isDict(i) && i.name === name) : undefined;
  if (!found) throw new KubeconfigError(`kubeconfig ${file}: ${field} "${name}" not found in ${list}`);
  const body = found[field];
  return isDict(body) ? body : {};
}

export function loadKubeconfig(path: string): ClusterConnection {
  const file = resolve(path);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new KubeconfigError(
      `kubeconfig ${file}: cannot read: ${(e as NodeJS.ErrnoException).code ?? errorMessage(e)}`,
    );
  }
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (e) {
    throw new KubeconfigError(`kubeconfig ${file}: not valid YAML: ${errorMessage(e).split('\n')[0]}`);
  }
  if (!isDict(doc))
    throw new KubeconfigError(
      `kubeconfig ${file}: not a kubeconfig (expected a mapping with clusters, users and contexts)`,
    );
  const contextName = str(doc, 'current-context');
  if (!contextName) throw new KubeconfigError(`kubeconfig ${file}: no current-context`);
  const context = named(doc, 'contexts', 'context', contextName, file);
  const clusterName = str(context, 'cluster');
  if (!clusterName) throw new KubeconfigError(`kubeconfig ${file}: context "${contextName}" names no cluster`);
  const cluster = named(doc, 'clusters', 'cluster', clusterName, file);
  const userName = str(context, 'user');
  const user = userName ? named(doc, 'users', 'user', userName, file) : {};
  const base = dirname(file);
  // Relative paths in a kubeconfig are relative to the file, as client-go resolves them.
  const at = (p: string): string => (isAbsolute(p) ? p : resolve(base, p));
  const readPem = (
    d: Dict,
    fileKey: string,
    dataKey: string,
    what: string,
  ): { data: Buffer; file?: string } | undefined => {
    const data = str(d, dataKey);
    if (data) {
      const buf = Buffer.from(data, 'base64');
      if (buf.length === 0) throw new KubeconfigError(`kubeconfig ${file}: ${dataKey} is not base64`);
      return { data: buf };
    }
    const p = str(d, fileKey);
    if (!p) return undefined;
    try {
      return { data: readFileSync(at(p)), file: at(p) };
    } catch (e) {
      throw new KubeconfigError(
        `kubeconfig ${file}: cannot read ${what} ${at(p)}: ${(e as NodeJS.ErrnoException).code ?? errorMessage(e)}`,
      );
    }
  };

  const server = str(cluster, 'server');
  if (!server) throw new KubeconfigError(`kubeconfig ${file}: cluster "${clusterName}" has no server`);
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new KubeconfigError(
      `kubeconfig ${file}: cluster "${clusterName}" server ${JSON.stringify(server)} is not a URL`,
    );
  }
  if (url.protocol !== 'https:')
    throw new KubeconfigError(
      `kubeconfig ${file}: server ${server} is not https; bootlet only talks TLS to the API server`,
    );
  if (cluster['insecure-skip-tls-verify'] === true)
    throw new KubeconfigError(
      `kubeconfig ${file}: insecure-skip-tls-verify is set; bootlet always verifies the API server's certificate (give certificate-authority or certificate-authority-data)`,
    );
  for (const unsupported of ['exec', 'auth-provider', 'username', 'password'])
    if (user[unsupported] !== undefined)
      throw new KubeconfigError(
        `kubeconfig ${file}: user "${userName ?? ''}" uses ${unsupported}, which bootlet does not support (use a client certificate or a token)`,
      );

  const ca = readPem(cluster, 'certificate-authority', 'certificate-authority-data', 'certificate authority');
  const cert = readPem(user, 'client-certificate', 'client-certificate-data', 'client certificate');
  const key = readPem(user, 'client-key', 'client-key-data', 'client key');
  if (!!cert !== !!key)
    throw new KubeconfigError(
      `kubeconfig ${file}: user "${userName ?? ''}" has a client ${cert ? 'certificate without a key' : 'key without a certificate'}`,
    );
  const token = str(user, 'token');
  const tokenFileRaw = str(user, 'tokenFile');
  const tokenFile = tokenFileRaw ? at(tokenFileRaw) : undefined;
  if (tokenFile) {
    try {
      readFileSync(tokenFile);
    } catch (e) {
      throw new KubeconfigError(
        `kubeconfig ${file}: cannot read tokenFile ${tokenFile}: ${(e as NodeJS.ErrnoException).code ?? errorMessage(e)}`,
      );
    }
  }
  if (!cert && !token && !tokenFile)
    throw new KubeconfigError(
      `kubeconfig ${file}: user "${userName ?? ''}" has no credentials (client certificate or token)`,
    );
  return {
    server: `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`,
    ca: ca?.data,
    caFile: ca?.file,
    tlsServerName: str(cluster, 'tls-server-name'),
    cert: cert?.data,
    key: key?.data,
    certFile: cert?.file,
    keyFile: key?.file,
    token,
    tokenFile,
    source: file,
  };
}
