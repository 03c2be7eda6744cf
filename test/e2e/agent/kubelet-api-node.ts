// The packaged agent as a node of the fake API server, serving the kubelet API as kubeadm configures
// it: client CA = the cluster CA, TokenReview, Webhook authorization (SubjectAccessReview), no
// anonymous; its serving pair self-signed under --cert-dir. What every kubelet API end-to-end file
// stands on, with an admin kubectl (Debian sid's) for the cluster.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeApiServer, type FakeApiServer } from '../../support/fake-apiserver/index.js';
import type { AgentOptions } from '../../support/agent.js';
import { httpsGet } from '../../support/https-get.js';
import { freePorts } from '../../support/ports.js';
import { waitFor } from '../../support/wait.js';
import { Kubectl } from '../fake-apiserver/kubectl.js';
import type { AgentHarness } from './harness.js';

export interface KubeletApiNodeOptions {
  /** More KubeletConfiguration lines (`healthzPort: 1234`, `enableSystemLogQuery: true`). */
  readonly config?: readonly string[];
  /** The webhook authorizer's caches as kubeadm sets them (5m allowed, 30s denied); otherwise the defaults. */
  readonly authorizerCaches?: boolean;
  /** More for the agent (healthzPort, execWrap); its `extraArgs` go before the node's flags. */
  readonly agent?: Partial<AgentOptions>;
}

export interface KubeletApiNode {
  readonly api: FakeApiServer;
  readonly kubeletPort: number;
  readonly adminKubeconfig: string;
  /** kubectl as the cluster's admin. */
  readonly admin: Kubectl;
  /** kubectl straight at the kubelet (its serving pair as the CA), as `user` with a bearer token the kubelet reviews. */
  atKubelet(user: string, token: string, groups: string[]): Kubectl;
  /**
   * Waits until the serving pair is written and /healthz answers the API server's client certificate
   * (and `also`, when given, holds).
   */
  waitServing(also?: () => boolean): Promise<void>;
}

/** Starts the fake API server and launches the agent (write the manifests first). */
export async function startKubeletApiNode(h: AgentHarness, o: KubeletApiNodeOptions = {}): Promise<KubeletApiNode> {
  const [kubeletPort] = await freePorts(1);
  const api = await startFakeApiServer({ dir: h.dir });
  const adminKubeconfig = join(h.dir, 'admin.kubeconfig');
  const pki = join(h.rootDir, 'pki');
  try {
    api.writeAdminKubeconfig(adminKubeconfig);
    const kubeconfig = api.writeKubeconfig(join(h.dir, 'kubelet.conf'), `system:node:${h.node}`, ['system:nodes']);
    const configFile = join(h.dir, 'kubelet-api-config.yaml');
    const lines = [
      'apiVersion: kubelet.config.k8s.io/v1beta1',
      'kind: KubeletConfiguration',
      `podLogsDir: ${h.podLogsDir}`,
      `port: ${kubeletPort}`,
      ...(o.config ?? []),
      'authentication:',
      '  anonymous: {enabled: false}',
      '  webhook: {enabled: true, cacheTTL: 0s}',
      `  x509: {clientCAFile: ${api.caFile}}`,
      'authorization:',
      '  mode: Webhook',
      ...(o.authorizerCaches ? ['  webhook: {cacheAuthorizedTTL: 5m, cacheUnauthorizedTTL: 30s}'] : []),
    ];
    writeFileSync(configFile, `${lines.join('\n')}\n`);
    h.launch({
      configFile,
      kubeletPort,
      ...o.agent,
      extraArgs: [
        ...(o.agent?.extraArgs ?? []),
        `--kubeconfig=${kubeconfig}`,
        '--node-ip=127.0.0.1',
        `--cert-dir=${pki}`,
      ],
    });
  } catch (err) {
    // The caller never got the API server to dispose of.
    await api.dispose();
    throw err;
  }
  return {
    api,
    kubeletPort,
    adminKubeconfig,
    admin: new Kubectl(adminKubeconfig, h.dir),
    atKubelet(user, token, groups) {
      api.addToken(token, user, groups);
      const file = join(h.dir, `${user}.kubelet.kubeconfig`);
      const kubeconfig = {
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'node',
            cluster: { server: `https://127.0.0.1:${kubeletPort}`, 'certificate-authority': join(pki, 'kubelet.crt') },
          },
        ],
        users: [{ name: user, user: { token } }],
        contexts: [{ name: 'node', context: { cluster: 'node', user } }],
        'current-context': 'node',
      };
      writeFileSync(file, JSON.stringify(kubeconfig));
      return new Kubectl(file, h.dir);
    },
    async waitServing(also = () => true) {
      const cert = api.kubeletClientCert;
      const healthz = (): Promise<{ status: number } | undefined> =>
        httpsGet(`https://127.0.0.1:${kubeletPort}/healthz`, { cert: cert.certPem, key: cert.keyPem }).catch(
          () => undefined,
        );
      // The kubelet API starts after the first sync, with a self-signed pair it makes first.
      await waitFor(async () => also() && existsSync(join(pki, 'kubelet.crt')) && (await healthz())?.status === 200, {
        timeoutMs: 60_000,
        what: 'the kubelet API serving',
      });
    },
  };
}
