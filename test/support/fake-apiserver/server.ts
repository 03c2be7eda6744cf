import { createSecureServer, type Http2SecureServer, type ServerHttp2Session } from 'node:http2';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Pod } from 'kubernetes-types/core/v1';
import type { TokenTable } from './authn.js';
import { BOOTSTRAP_TOKEN_GROUP } from './authz.js';
import { CsrApprover, type ApproverSettings } from './certificates/approver.js';
import { CsrSigner, type SignerSettings } from './certificates/signer.js';
import { Chaos, type RequestFacts, type WatchFault } from './chaos.js';
import { GarbageCollector } from './garbage-collector.js';
import { handleRequest, handleUpgrade, type HandlerDeps, type RequestRecord } from './handle-request.js';
import { KUBELET_API_CLIENT, type Grants } from './authz.js';
import type { KubeletClientTls } from './kubelet/node-endpoint.js';
import { MetricsApi } from './metrics-api.js';
import type { ReviewRecord } from './reviews.js';
import type { Req, Res } from './http.js';
import { writeKubeconfigFile } from './kubeconfig.js';
import { ClusterObjectControllers } from './core-objects/cluster-objects.js';
import { prepareCoreForCreate } from './core-objects/core-strategy.js';
import { TokenIssuer, type IssuedToken, type TokenSettings } from './tokens/token-request.js';
import { createPki, type KeyPair, type Pki } from './pki.js';
import { byKey, INITIAL_NAMESPACES, RESOURCES } from './resources.js';
import { ObjectStore } from './store.js';
import { prepareForCreate } from './strategy.js';
import { deepCopy, type KObject } from './types.js';

export type { RequestRecord } from './handle-request.js';
export type { IssuedToken } from './tokens/token-request.js';

export interface StartOptions {
  port?: number;
  /** Offer HTTP/2 (ALPN h2, and http/1.1); false: an HTTP/1.1-only server (never h2). Default true. */
  http2?: boolean;
  /** Where certificates live; a temp dir (removed by dispose) when omitted. */
  dir?: string;
}

export interface KubeconfigOptions {
  /** Embed certificate data (default) or point at the files. */
  embed?: boolean;
  /** Authenticate with this bearer token (registered for user/groups) instead of a client cert. */
  token?: string;
}

const REQUEST_LOG_LIMIT = 10_000;

/** One TLS connection a client made (the handshake finished). */
export interface ConnectionRecord {
  /** RequestRecord.connection of the requests it carried. */
  id: number;
  /** ALPN: 'h2', 'http/1.1', or 'none' when nothing was negotiated. */
  protocol: string;
  /** SHA-256 fingerprint of the client certificate ('' = none). */
  clientCert: string;
  /** performance.now() at the handshake, and when it closed (undefined while open). */
  openedAt: number;
  closedAt?: number;
}

/** Where a connection's id is kept on its TLS socket (reachable through HTTP/2's socket proxy too). */
export const CONNECTION_ID = Symbol.for('fake-apiserver connection id');

export const ADMIN = { user: 'system:admin', groups: ['system:masters'] };

/** A kube-apiserver stand-in for tests: TLS, authn/authz, NodeRestriction, the resources bootlet uses. */
export class FakeApiServer {
  readonly requests: RequestRecord[] = [];
  /** Every TLS connection clients made, in order (kept for the whole life of the server, across stop/start). */
  readonly connections: ConnectionRecord[] = [];
  /** TokenReviews and SubjectAccessReviews answered, in order. */
  readonly reviews: ReviewRecord[] = [];
  private readonly grants: Grants = new Map();
  private kubeletClient: KeyPair | undefined;
  private kubeletCa: string | undefined;
  private readonly metricsApi: MetricsApi;
  readonly store = new ObjectStore();
  private readonly chaos = new Chaos();
  private readonly gc = new GarbageCollector(this.store, () => this.running);
  private readonly signer: CsrSigner;
  private readonly approver = new CsrApprover(this.store);
  private readonly tokens: TokenTable = new Map();
  private readonly tokenIssuer = new TokenIssuer(this.store, this.tokens);
  private saAdmission = false;
  private readonly controllers = new ClusterObjectControllers(this.store, {
    caPem: () => this.pki.caPem,
    targetPort: 6443,
  });
  private server: Http2SecureServer | HttpsServer | undefined;
  private http2: boolean;
  private readonly sockets = new Set<Socket>();
  private readonly sessions = new Set<ServerHttp2Session>();
  private readonly watches = new Set<(how?: 'timeout') => void>();
  private readonly hung = new Set<Res>();
  private boundPort: number;

  private constructor(
    private readonly pki: Pki,
    readonly dir: string,
    private readonly ownsDir: boolean,
    port: number,
    http2: boolean,
  ) {
    this.boundPort = port;
    this.http2 = http2;
    this.signer = new CsrSigner(this.store, { certPem: pki.caPem, keyPem: pki.caKeyPem });
    this.metricsApi = new MetricsApi(this.store, () => this.kubeletTls());
    this.seed();
  }

  static async create(opts: StartOptions = {}): Promise<FakeApiServer> {
    const ownsDir = !opts.dir;
    const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'fake-apiserver-'));
    const s = new FakeApiServer(createPki(dir), dir, ownsDir, opts.port ?? 0, opts.http2 ?? true);
    await s.start();
    return s;
  }

  get port(): number {
    return this.boundPort;
  }
  get url(): string {
    return `https://127.0.0.1:${this.boundPort}`;
  }
  get caFile(): string {
    return this.pki.caFile;
  }
  get caPem(): string {
    return this.pki.caPem;
  }
  get running(): boolean {
    return this.server !== undefined;
  }

  issueClientCert(user: string, groups: string[]): KeyPair {
    return this.pki.issueClientCert(user, groups);
  }

  addToken(token: string, user: string, groups: string[]): void {
    this.tokens.set(token, { name: user, groups });
  }

  /**
   * A bootstrap token `<id>.<secret>` as kube-apiserver's bootstrap authenticator reads it from its
   * Secret: user `system:bootstrap:<id>`, group `system:bootstrappers` plus the token's
   * auth-extra-groups (kubeadm: its default node token group, allowed to file CSRs).
   */
  addBootstrapToken(token: string, extraGroups: string[] = [BOOTSTRAP_TOKEN_GROUP]): void {
    const m = /^([a-z0-9]{6})\.([a-z0-9]{16})$/.exec(token);
    if (!m) throw new Error(`not a bootstrap token: ${token}`);
    this.addToken(token, `system:bootstrap:${m[1]}`, ['system:bootstrappers', ...extraGroups]);
  }

  /** A kubeconfig as kubeadm writes bootstrap-kubelet.conf: the CA and a bootstrap token. */
  writeBootstrapKubeconfig(path: string, token: string, opts: Omit<KubeconfigOptions, 'token'> = {}): string {
    this.addBootstrapToken(token);
    writeKubeconfigFile(path, this, 'tls-bootstrap-token-user', { token }, opts.embed ?? true);
    return path;
  }

  /**
   * The API server's kubelet client (kube-apiserver --kubelet-client-certificate): CN
   * kube-apiserver-kubelet-client, bound to system:kubelet-api-admin as kubeadm does. Made on first use.
   */
  get kubeletClientCert(): KeyPair {
    this.kubeletClient ??= this.pki.issueClientCert(KUBELET_API_CLIENT, ['kubeadm:cluster-admins']);
    return this.kubeletClient;
  }

  /** --kubelet-certificate-authority: verify kubelets' serving certificates (and their IP) against this CA. */
  verifyKubelets(caPem: string | undefined): void {
    this.kubeletCa = caPem;
  }

  private kubeletTls(): KubeletClientTls {
    const c = this.kubeletClientCert;
    return { cert: c.certPem, key: c.keyPem, ca: this.kubeletCa };
  }

  /** An RBAC rule for a test: `who` (user or group) may `verbs` on `resource` (`nodes/proxy`, `pods/log`, ...). */
  grant(who: string, resource: string, verbs: string[]): void {
    const rules = this.grants.get(who) ?? {};
    rules[resource] = [...new Set([...(rules[resource] ?? []), ...verbs])];
    this.grants.set(who, rules);
  }

  /** The CSR signer's lifetimes (as kube-controller-manager's --cluster-signing-duration and its fixed backdate). */
  configureSigner(settings: Partial<SignerSettings>): void {
    this.signer.settings = { ...this.signer.settings, ...settings };
  }

  /** Auto-approval of kubelet client CSRs, as kubeadm's RBAC bindings enable it; off by default. */
  autoApprove(settings: Partial<ApproverSettings>): void {
    this.approver.settings = { ...this.approver.settings, ...settings };
  }

  writeKubeconfig(path: string, user: string, groups: string[], opts: KubeconfigOptions = {}): string {
    if (opts.token) this.addToken(opts.token, user, groups);
    const cert = opts.token ? undefined : this.issueClientCert(user, groups);
    writeKubeconfigFile(path, this, user, { cert, token: opts.token }, opts.embed ?? true);
    return path;
  }

  writeAdminKubeconfig(path: string, opts: KubeconfigOptions = {}): string {
    return this.writeKubeconfig(path, ADMIN.user, ADMIN.groups, opts);
  }

  /** Tokens TokenRequest issued, in order: all, or those bound to the pod with this UID. */
  issuedTokens(podUid?: string): readonly IssuedToken[] {
    return podUid === undefined ? [...this.tokenIssuer.issued] : this.tokenIssuer.forPod(podUid);
  }
  /**
   * The ServiceAccount admission plugin on pod creates through the API (off by default, so that tests
   * that write pods without a service account keep them as written): `default` filled in, the
   * kube-api-access-* volume and its mounts added, a missing account refused.
   */
  serviceAccountAdmission(on: boolean): void {
    this.saAdmission = on;
  }
  /**
   * Token lifetimes for tests of renewal: a lower floor than the real 600 s, and a cap as
   * --service-account-max-token-expiration gives (a capped request is not extended, status says the cap).
   */
  configureTokens(settings: Partial<TokenSettings>): void {
    this.tokenIssuer.settings = { ...this.tokenIssuer.settings, ...settings };
  }
  /** How many tokens were issued bound to the pod with this UID. */
  tokensIssued(podUid: string): number {
    return this.tokenIssuer.forPod(podUid).length;
  }
  /** The public key service account tokens are signed with (ES256), as --service-account-key-file would hold it. */
  get serviceAccountPublicKeyPem(): string {
    return this.tokenIssuer.key.publicKeyPem;
  }

  // ---- chaos controls ----
  setLatency(ms: number): void {
    this.chaos.latencyMs = ms;
  }
  /**
   * Answers the next n requests (those `only` accepts, if given) with a 500/503/429 Status. Note that
   * /usr/bin/kubectl is a dispatcher that GETs /version first; filter it out with `only` when needed.
   */
  failNext(n: number, status: 500 | 503 | 429, retryAfterSeconds?: number, only?: (r: RequestFacts) => boolean): void {
    this.chaos.failNext(n, status, retryAfterSeconds, only);
  }
  hang(on: boolean): void {
    this.chaos.hanging = on;
  }
  /** Offer h2 (or HTTP/1.1 only, no ALPN) from the next start() on: a load balancer put in front, or taken away. */
  offerHttp2(on: boolean): void {
    this.http2 = on;
  }
  /** A server that listens but is not ready: /readyz answers 500 (as during kube-apiserver's start), the rest is served. */
  notReady(on: boolean): void {
    this.chaos.notReady = on;
  }
  /** Watches opened from now on misbehave as `fault` says (undefined: stream normally). */
  faultWatches(fault: WatchFault | undefined, hugeLineBytes?: number): void {
    this.chaos.watchFault = fault;
    if (hugeLineBytes !== undefined) this.chaos.hugeLineBytes = hugeLineBytes;
  }
  /** Bytes of 'huge-line' watch events the socket accepted so far. */
  get hugeLineBytesSent(): number {
    return this.chaos.hugeLineBytesSent;
  }
  /** The garbage collector (on by default) deletes objects whose owners are all gone, e.g. mirror pods of a deleted Node. */
  garbageCollection(on: boolean): void {
    this.gc.enabled = on;
    if (on) this.gc.schedule();
  }

  /** Ends every open watch as if its timeoutSeconds had passed (a BOOKMARK first, when asked for). */
  timeOutWatches(): void {
    for (const end of [...this.watches]) end('timeout');
  }

  /**
   * etcd compacted past every resourceVersion a client holds: the objects stay, every open watch
   * ends (as a watch cache that restarts ends them), and a watch from an older resourceVersion is
   * told 410 Expired, so the client must LIST again.
   */
  compact(): void {
    this.store.compact();
    for (const end of [...this.watches]) end();
  }

  /** A fresh etcd: every object gone, the initial namespaces back; old resourceVersions now 410. */
  wipe(): void {
    this.store.wipe();
    for (const end of [...this.watches]) end();
    this.seed();
  }

  // ---- direct access for assertions and setup ----
  objects(resource: string, namespace?: string): KObject[] {
    return this.store.list(storageKeyOf(resource), namespace);
  }
  object(resource: string, namespace: string, name: string): KObject | undefined {
    return this.store.get(storageKeyOf(resource), namespace, name);
  }
  /** A stored pod, typed for assertions on its spec and status. */
  pod(namespace: string, name: string): Pod | undefined {
    return this.object('pods', namespace, name) as unknown as Pod | undefined;
  }
  /** Creates an object bypassing authn/admission (test setup), defaulted as a create would. */
  seedObject(resource: string, o: KObject): KObject {
    const rt = byKey(storageKeyOf(resource));
    const prepared = prepareForCreate(rt, deepCopy(o));
    prepareCoreForCreate(rt, prepared, this.store);
    return this.store.put(rt.storageKey, prepared, 'ADDED');
  }

  // ---- lifecycle ----
  async start(): Promise<void> {
    if (this.server) return;
    const tls = {
      key: this.pki.server.keyPem,
      cert: this.pki.server.certPem,
      ca: this.pki.caPem,
      requestCert: true,
      rejectUnauthorized: false,
    };
    const handler = (req: unknown, res: unknown): void =>
      void handleRequest(this.handlerDeps(), req as Req, res as Res);
    const server: Http2SecureServer | HttpsServer = this.http2
      ? createSecureServer({ ...tls, allowHTTP1: true }, handler)
      : createHttpsServer(tls, handler);
    server.on('secureConnection', (socket: TLSSocket) => {
      const record: ConnectionRecord = {
        id: this.connections.length + 1,
        protocol: socket.alpnProtocol || 'none',
        clientCert: socket.getPeerCertificate()?.fingerprint256 ?? '',
        openedAt: performance.now(),
      };
      (socket as unknown as Record<symbol, number>)[CONNECTION_ID] = record.id;
      this.connections.push(record);
      socket.on('close', () => (record.closedAt = performance.now()));
    });
    // kubectl exec, attach and port-forward upgrade an HTTP/1.1 connection.
    server.on(
      'upgrade',
      (req: IncomingMessage, socket: Duplex, head: Buffer) => void handleUpgrade(this.handlerDeps(), req, socket, head),
    );
    server.setTimeout(0);
    // Raw TCP sockets, so that a connection still in its TLS handshake is cut by stop() too.
    server.on('connection', (s: Socket) => {
      if (this.server !== server) return void s.destroy();
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    if (this.http2)
      (server as Http2SecureServer).on('session', (sess: ServerHttp2Session) => {
        this.sessions.add(sess);
        sess.on('close', () => this.sessions.delete(sess));
      });
    this.server = server;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(this.boundPort, '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (e) {
      this.server = undefined;
      throw e;
    }
    const addr = server.address();
    if (addr && typeof addr === 'object') this.boundPort = addr.port;
    this.gc.schedule();
  }

  /** Closes the listener and drops every connection and stream, as a killed kube-apiserver would. */
  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Cut first, so that watchers see a dropped connection rather than a clean end of stream.
    for (const sess of this.sessions) sess.destroy();
    for (const s of this.sockets) s.destroy();
    for (const end of [...this.watches]) end();
    this.hung.clear();
    await closed;
  }

  async dispose(): Promise<void> {
    await this.stop();
    this.gc.close();
    this.controllers.close();
    this.signer.close();
    this.approver.close();
    if (this.ownsDir) rmSync(this.dir, { recursive: true, force: true });
  }

  private handlerDeps(): HandlerDeps {
    return {
      store: this.store,
      chaos: this.chaos,
      tokens: this.tokens,
      serverAddress: `127.0.0.1:${this.boundPort}`,
      log: (r) => {
        this.requests.push(r);
        if (this.requests.length > REQUEST_LOG_LIMIT) this.requests.splice(0, this.requests.length - REQUEST_LOG_LIMIT);
      },
      park: (res) => {
        this.hung.add(res);
        res.on('close', () => this.hung.delete(res));
      },
      watches: (end) => {
        this.watches.add(end);
        return () => this.watches.delete(end);
      },
      grants: this.grants,
      tokenIssuer: this.tokenIssuer,
      serviceAccountAdmission: this.saAdmission,
      kubeletTls: () => this.kubeletTls(),
      metrics: this.metricsApi,
      reviewed: (r) => {
        this.reviews.push(r);
        if (this.reviews.length > REQUEST_LOG_LIMIT) this.reviews.splice(0, this.reviews.length - REQUEST_LOG_LIMIT);
      },
    };
  }

  private seed(): void {
    for (const name of INITIAL_NAMESPACES) this.seedObject('namespaces', { metadata: { name } });
  }
}

function storageKeyOf(resource: string): string {
  if (RESOURCES.some((r) => r.storageKey === resource)) return resource;
  const r = RESOURCES.find((x) => x.resource === resource);
  if (!r) throw new Error(`unknown resource ${resource}`);
  return r.storageKey;
}
