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
