// One representative manifest loaded (parsed, decoded, defaulted, validated, given its identity)
// while the agent waits, and thrown away. The executable's code cache holds only the code that
// runs at load; every function of the YAML parser, the decoder, the rules and the UID hash is
// compiled on its first call. Without this that happens inside the first manifests' way to their
// pods: kubeadm starts the kubelet first and writes the control plane's manifests after, into an
// agent that has read nothing yet.
import { loadManifest } from './manifest';

/** As kubeadm writes a static pod: hostPath volumes, probes, resources, priority, host network. */
const SAMPLE = `apiVersion: v1
kind: Pod
metadata:
  annotations:
    example.com/warm-up: "true"
  labels:
    component: warm-up
    tier: control-plane
  name: warm-up
  namespace: kube-system
spec:
  containers:
  - command:
    - warm-up
    - --flag=value
    env:
    - name: A
      value: b
    image: registry.example/warm-up:v1
    imagePullPolicy: IfNotPresent
    livenessProbe:
      failureThreshold: 8
      httpGet:
        host: 127.0.0.1
        path: /livez
        port: 10259
        scheme: HTTPS
      initialDelaySeconds: 10
      periodSeconds: 10
      timeoutSeconds: 15
    name: warm-up
    ports:
    - containerPort: 10259
      name: probe-port
      protocol: TCP
    readinessProbe:
      tcpSocket:
        port: probe-port
    resources:
      requests:
        cpu: 100m
        memory: 64Mi
    startupProbe:
      exec:
        command: [/bin/true]
    volumeMounts:
    - mountPath: /etc/warm-up
      name: conf
      readOnly: true
    - mountPath: /var/lib/warm-up
      name: data
  hostNetwork: true
  priority: 2000001000
  priorityClassName: system-node-critical
  securityContext:
    seccompProfile:
      type: RuntimeDefault
  volumes:
  - hostPath:
      path: /etc/warm-up
      type: FileOrCreate
    name: conf
  - hostPath:
      path: /var/lib/warm-up
      type: DirectoryOrCreate
    name: data
status: {}
`;

/** Loads SAMPLE once and drops the result; never throws. */
export function warmUpManifestLoading(nodeName: string): void {
  try {
    loadManifest('/warm-up/warm-up.yaml', SAMPLE, nodeName, new Date());
  } catch {
    // Only a warm-up: a real manifest gets its own answer.
  }
}

/** For the test: the sample is a manifest the agent accepts. */
export const WARM_UP_SAMPLE = SAMPLE;
