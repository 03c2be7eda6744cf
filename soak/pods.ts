// The pods the soak runs: busybox sleepers on the host network (as control-plane static pods are),
// and what tells one edition of a manifest from the next.
import { TEST_IMAGES } from '../dev/images.js';

export interface SleeperOptions {
  /** Changes the pod (and so its UID) without changing what it does. */
  readonly edition?: number;
  readonly namespace?: string;
  readonly grace?: number;
  /** Seconds the container takes to stop after SIGTERM (a pod slow to terminate). */
  readonly stopDelay?: number;
  readonly crashLoopBackOffMaxSeconds?: number;
  readonly containers?: number;
}

export function sleeper(name: string, o: SleeperOptions = {}): string {
  const onTerm = o.stopDelay ? `sleep ${o.stopDelay}; exit 0` : 'exit 0';
  const annotations =
    o.crashLoopBackOffMaxSeconds === undefined
      ? ''
      : `\n  annotations: {bootlet.io/crashloop-backoff-max-seconds: "${o.crashLoopBackOffMaxSeconds}"}`;
  const containers = Array.from(
    { length: o.containers ?? 1 },
    (_, i) => `  - name: ${i === 0 ? 'main' : `side${i}`}
    image: ${TEST_IMAGES.busybox}
    env: [{name: EDITION, value: "${o.edition ?? 1}"}]
    command: ["sh", "-c", "trap '${onTerm}' TERM; while true; do sleep 1; done"]
`,
  ).join('');
  return `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${o.namespace ?? 'default'}${annotations}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: ${o.grace ?? 5}
  containers:
${containers}`;
}
