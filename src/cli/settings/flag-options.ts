// Kubelet flags that have no KubeletConfiguration field (KubeletFlags: what is particular to one
// node) and that reach the agent's options. The key is the name the resolved options use.
import * as check from './checks.js';
import { optionalSetting, setting } from './setting.js';
import { nodeLabels, path, str } from './value-types.js';

export const FLAG_OPTIONS = {
  configFile: optionalSetting({
    flag: 'config',
    type: path,
    status: 'applied',
    help: 'KubeletConfiguration file (kubelet.config.k8s.io/v1beta1); flags win over it',
  }),
  kubeconfig: optionalSetting({
    flag: 'kubeconfig',
    type: path,
    status: 'applied',
    help: 'kubeconfig of the API server; without it bootlet runs standalone',
  }),
  bootstrapKubeconfig: optionalSetting({
    flag: 'bootstrap-kubeconfig',
    type: path,
    status: 'applied',
    help: 'kubeconfig used to request a client certificate when --kubeconfig does not exist yet (TLS bootstrap)',
  }),
  // The kubelet's default is /var/lib/kubelet/pki; bootlet's follows --root-dir (the same with the default root dir).
  certDir: optionalSetting({
    flag: 'cert-dir',
    type: path,
    status: 'applied',
    help: 'Directory of the certificates the kubelet requests or generates (default <root-dir>/pki)',
  }),
  rootDir: setting({
    flag: 'root-dir',
    type: path,
    default: '/var/lib/kubelet',
    validate: check.nonEmpty,
    status: 'applied',
    help: 'Directory for pod volumes and state',
  }),
  hostnameOverride: optionalSetting({
    flag: 'hostname-override',
    type: str,
    status: 'applied',
    help: 'Node name to use instead of the hostname (empty: the hostname)',
  }),
  nodeIP: optionalSetting({
    flag: 'node-ip',
    type: str,
    validate: check.nodeIPs,
    status: 'applied',
    help: 'IP address of the node (or an IPv4,IPv6 pair); default: the first non-loopback address',
  }),
  nodeLabels: setting({
    flag: 'node-labels',
    type: nodeLabels,
    default: {},
    status: 'applied',
    help: 'Labels to register the Node with (repeatable)',
  }),
  cloudProvider: setting({
    flag: 'cloud-provider',
    type: str,
    default: '',
    status: 'not-implemented',
    help: 'External cloud provider ("external"), which then initialises the Node',
  }),
};
