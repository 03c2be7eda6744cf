// The User-Agent of HTTP and gRPC probes. bootlet sends the kubelet's `kube-probe/<major>.<minor>`
// rather than a name of its own: applications, web servers and meshes recognise probe traffic by
// that prefix (to skip auth or access logs, or to rewrite probes), and a static pod moved between
// a kubelet and bootlet must see the same requests. The version is the Kubernetes release whose
// probe behaviour bootlet follows (src/version.ts).
import { KUBERNETES_MINOR_VERSION } from '../version.js';

export const KUBE_PROBE_VERSION = KUBERNETES_MINOR_VERSION;
export const PROBE_USER_AGENT = `kube-probe/${KUBE_PROBE_VERSION}`;
