// Builds the kubelet API from the agent's settings: the serving certificate, the authenticator and
// authorizer the configuration asks for, the routes, and the HTTPS listener. Nothing here holds
// pod state: it reads the status manager's entries and asks the runtime.
import type { CsrClient } from '../../apiserver/credentials/certificate-signing-request.js';
import type { ClusterConnection } from '../../apiserver/client/kubeconfig.js';
import type { BootletOptions } from '../../cli/options.js';
import type { Logger } from '../../log/logger.js';
import type { ImageService, RuntimeService } from '../../cri/cri-types.js';
import { RequestAuthenticator } from '../auth/authenticator.js';
import { NodeReviewClient } from '../auth/review-client.js';
import { alwaysAllow, WebhookAuthorizer, type Authorizer } from '../auth/subject-access-review.js';
import { TokenReviewAuthenticator } from '../auth/token-review.js';
import type { HealthCheck } from '../healthz.js';
import type { ServerSource } from '../source.js';
import { StatsProvider } from '../stats/stats-provider.js';
import { insecureCipherSuites } from '../tls/cipher-suites.js';
import type { Pod } from 'kubernetes-types/core/v1';
import { BootstrappedServingCertificate } from '../tls/serving-bootstrap.js';
import {
  FileServingCertificate,
  SelfSignedServingCertificate,
  type ServingCertificateSource,
} from '../tls/serving-certificate.js';
import { NODE_LOG_DIR } from '../node-logs/log-dir.js';
import { ConnectionGate } from './connection-gate.js';
import { KubeletHandler } from './kubelet-handler.js';
import { startKubeletServer, type RunningKubeletServer } from './kubelet-server.js';

export interface ApiCredentials {
  connection(): ClusterConnection | undefined;
  /** The API side's client once connected; reviews and the serving certificate's requests share its connection. */
  sharedClient?(): CsrClient | undefined;
  readonly connectionReady: Promise<ClusterConnection>;
}

export interface KubeletApiDeps {
  source: ServerSource;
  /** /metrics, as the read-only port serves it. */
  metrics(): string | Promise<string>;
  runtime: RuntimeService;
  /** The runtime's image filesystem (ImageFsInfo) for /stats/summary's node.runtime. */
  images?: Pick<ImageService, 'imageFsInfo'>;
  checks: readonly HealthCheck[];
  /** Undefined when the agent runs without an API server. */
  api: ApiCredentials | undefined;
  /** /configz: the configuration in force, as the wiring renders it from the settings table. */
  configz(): unknown;
  logger: Logger;
  /** The pod cgroups, for the Summary API's pod figures and pressure on cgroup v2 (StatsProviderOptions). */
  cgroups?: { podCgroup(pod: Pod): string | undefined; unifiedRoot: string | undefined };
}

function servingCertificate(
  o: BootletOptions,
  api: ApiCredentials | undefined,
  logger: Logger,
): ServingCertificateSource {
  if (o.tlsCertFile && o.tlsPrivateKeyFile)
    return new FileServingCertificate(o.tlsCertFile, o.tlsPrivateKeyFile, logger);
  if (o.serverTLSBootstrap) {
    return new BootstrappedServingCertificate({
      certDir: o.certDir,
      nodeName: o.nodeName,
      altNames: { dnsNames: [o.nodeName], ipAddresses: o.nodeIP ? [o.nodeIP] : [] },
      connection: api?.connectionReady,
      sharedClient: () => api?.sharedClient?.(),
      logger,
    });
  }
  return new SelfSignedServingCertificate(o.certDir, o.nodeName, o.nodeIP, logger);
}

export function startKubeletApi(o: BootletOptions, d: KubeletApiDeps): RunningKubeletServer | undefined {
  const logger = d.logger.with({ component: 'kubelet-api' });
  // The agent says so itself at start-up (it does not load this module then).
  if (!o.enableServer) return undefined;
  const reviews = new NodeReviewClient(
    () => d.api?.connection(),
    () => d.api?.sharedClient?.(),
  );
  const tokens = o.authenticationTokenWebhook
    ? new TokenReviewAuthenticator(reviews, o.authenticationTokenWebhookCacheTTLMs)
    : undefined;
  const authorizer: Authorizer =
    o.authorizationMode === 'AlwaysAllow'
      ? alwaysAllow
      : new WebhookAuthorizer(reviews, {
          nodeName: o.nodeName,
          authorizedTtlMs: o.authorizationWebhookCacheAuthorizedTTLMs,
          unauthorizedTtlMs: o.authorizationWebhookCacheUnauthorizedTTLMs,
        });
  if (!d.api && o.authorizationMode === 'Webhook') {
    logger.warn(
      'authorization.mode is Webhook but there is no API server (no --kubeconfig): every kubelet API request is refused; use AlwaysAllow with a client CA to serve it standalone',
    );
  }
  const gate = new ConnectionGate(logger);
  const handler = new KubeletHandler({
    source: d.source,
    runtime: d.runtime,
    podLogsDir: o.podLogsDir,
    stats: new StatsProvider({
      runtime: d.runtime,
      images: d.images,
      nodeName: o.nodeName,
      rootDir: o.rootDir,
      statuses: () => d.source.statuses(),
      podCgroup: d.cgroups?.podCgroup,
      unifiedRoot: d.cgroups?.unifiedRoot,
    }),
    configz: d.configz,
    metrics: d.metrics,
    checks: d.checks,
    enableDebuggingHandlers: o.enableDebuggingHandlers,
    nodeLogs: {
      logDir: NODE_LOG_DIR,
      enableSystemLogHandler: o.enableSystemLogHandler,
      enableSystemLogQuery: o.enableSystemLogQuery,
      journalctl: 'journalctl',
    },
    authenticator: new RequestAuthenticator({ x509: o.clientCAFile !== undefined, tokens, anonymous: o.anonymousAuth }),
    authorizer,
    connections: gate,
    logger,
  });
  logger.info('Starting the kubelet API', {
    address: `${o.address}:${o.port}`,
    clientCAFile: o.clientCAFile,
    tokenWebhook: o.authenticationTokenWebhook,
    anonymous: o.anonymousAuth,
    authorizationMode: o.authorizationMode,
    servingCertificate: o.tlsCertFile ? o.tlsCertFile : o.serverTLSBootstrap ? 'serverTLSBootstrap' : 'self-signed',
  });
  // InitializeTLS's lines, in its words.
  for (const cipher of insecureCipherSuites(o.tlsCipherSuites))
    logger.info('Use of insecure cipher detected.', { cipher });
  if (o.tlsMinVersion === 'VersionTLS13' && o.tlsCipherSuites.length > 0)
    logger.info('Warning: TLS 1.3 cipher suites are not configurable, ignoring --tls-cipher-suites');
  const server = startKubeletServer({
    address: o.address,
    port: o.port,
    certificate: servingCertificate(o, d.api, logger),
    clientCAFile: o.clientCAFile,
    tlsMinVersion: o.tlsMinVersion,
    tlsCipherSuites: o.tlsCipherSuites,
    handler,
    gate,
    logger,
  });
  return {
    get url() {
      return server.url;
    },
    close: async () => {
      await server.close();
      reviews.close();
    },
  };
}
