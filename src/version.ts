// bootlet's own version, and the Kubernetes version whose kubelet behaviour it implements. The Node
// reports both as one semantic version, the Kubernetes one with bootlet's as build metadata (as k3s
// does: v1.36.0+k3s1), so kubeadm's version checks read a kubelet of that Kubernetes version.

// Set at build time by esbuild (`define`); "dev" when run from source.
declare const __BOOTLET_VERSION__: string | undefined;

export const BOOTLET_VERSION: string = typeof __BOOTLET_VERSION__ === 'string' ? __BOOTLET_VERSION__ : 'dev';

/** The kubelet whose flags, KubeletConfiguration (v1beta1) and behaviour bootlet follows. */
export const KUBERNETES_VERSION = 'v1.36.0';

/** Its major.minor (`1.36`): kube-probe's User-Agent and kubeadm's skew checks read only these. */
export const KUBERNETES_MINOR_VERSION: string = KUBERNETES_VERSION.replace(/^v(\d+\.\d+)\..*$/, '$1');

/** Build metadata allows only [0-9A-Za-z-] identifiers separated by dots. */
function buildMetadata(version: string): string {
  return version
    .split('.')
    .map((id) => id.replace(/[^0-9A-Za-z-]/g, '-') || '0')
    .join('.');
}

/** `nodeInfo.kubeletVersion`: v1.36.0+bootlet.0.1.0. */
export function kubeletVersion(bootletVersion: string = BOOTLET_VERSION): string {
  return `${KUBERNETES_VERSION}+bootlet.${buildMetadata(bootletVersion)}`;
}

/** `bootlet --version`, exactly as the kubelet prints its own: kubeadm's preflight parses this line. */
export function kubeletVersionLine(): string {
  return `Kubernetes ${kubeletVersion()}`;
}

/**
 * The Node.js the agent runs on: in the executable, the one it carries (build/build.mjs takes it
 * from the pinned `node-linux-<arch>` package); from source, whichever node runs it.
 */
export const NODE_VERSION: string = process.version;

/**
 * The flags that Node runs with. In the executable these are the V8 flags it carries (SEA
 * `execArgv`, build/build.mjs), and NODE_OPTIONS never adds to them. `--version=raw` prints them so
 * that an operator, or test/e2e/package/runtime-flags.test.ts, can see what the agent runs with.
 */
export const NODE_EXEC_ARGV: readonly string[] = process.execArgv;

/** `bootlet version`: an operator checking for a Node security release reads the runtime here. */
export function bootletVersionLine(): string {
  return `bootlet v${BOOTLET_VERSION} (kubelet ${KUBERNETES_VERSION}, node ${NODE_VERSION})`;
}
