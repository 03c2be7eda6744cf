// What `npm run up` runs bootlet with: its KubeletConfiguration and command line, in one place so
// that a test reads them through bootlet's own option resolution.
import { HOST_IS_CGROUP_V1 } from './cgroup-v1-host.js';

/**
 * A standalone node as an operator sets one up (Kubernetes' "Running Kubelet in Standalone Mode").
 * The kubelet API's defaults (authorization.mode Webhook, authentication.webhook.enabled) ask an API
 * server about every caller and this node has none, so the API would refuse everything: it is off.
 */
export function upKubeletConfig(podLogsDir: string): string {
  return `# Written by dev/up.ts: a standalone node (no API server).
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
podLogsDir: ${JSON.stringify(podLogsDir)}
# The kubelet API needs an API server to authorize its callers (or a client CA); \`build/bootlet pods
# --root-dir .tmp/up/root\` reads the pods from the agent's socket instead.
enableServer: false
${HOST_IS_CGROUP_V1 ? '# This host boots cgroup v1, which the kubelet refuses since 1.35 unless told otherwise.\nfailCgroupV1: false\n' : ''}`;
}

export interface UpArgs {
  readonly config: string;
  readonly manifests: string;
  readonly endpoint: string;
  readonly rootDir: string;
  readonly hostname: string;
}

export function upBootletArgs(a: UpArgs): string[] {
  return [
    '--config',
    a.config,
    '--pod-manifest-path',
    a.manifests,
    '--container-runtime-endpoint',
    a.endpoint,
    '--root-dir',
    a.rootDir,
    '--hostname-override',
    a.hostname,
  ];
}
