// The static pod most end-to-end tests run: one busybox container in kube-system on the host
// network, a 1 s grace period, and a shell command. `extra` is appended to the spec (volumes...).
import { TEST_IMAGES } from '../../dev/images.js';

/** A shell loop that ends at once on SIGTERM: a pod that stops within its grace period. */
export const SLEEP_LOOP = "trap 'exit 0' TERM; while true; do sleep 1; done";

export const busyboxPod = (name: string, command: string, extra = ''): string => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: kube-system}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: ${TEST_IMAGES.busybox}
    command: ["sh", "-c", ${JSON.stringify(command)}]
${extra}`;

/**
 * The API pod twin of busyboxPod, as JSON for `kubectl create -f -`: bound to `nodeName` in
 * kube-system, its container `main` running SLEEP_LOOP. `container` is merged into that container,
 * then `spec` into the spec (a `containers` there replaces the default one).
 */
export function busyboxApiPod(
  name: string,
  nodeName: string,
  over: { spec?: Record<string, unknown>; container?: Record<string, unknown> } = {},
): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'kube-system' },
    spec: {
      nodeName,
      hostNetwork: true,
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'main',
          image: TEST_IMAGES.busybox,
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', SLEEP_LOOP],
          ...over.container,
        },
      ],
      ...over.spec,
    },
  });
}
