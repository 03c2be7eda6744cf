// Small builders for manifest tests.
import type { Pod } from 'kubernetes-types/core/v1';

export const WEB_YAML = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  hostNetwork: true
  containers:
  - name: nginx
    image: nginx
    ports:
    - containerPort: 80
`;

/** A minimal valid pod object, with overrides merged into spec. */
export function pod(spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = { name: 'web' }): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata,
    spec: { containers: [{ name: 'c', image: 'busybox:1.36' }], ...spec },
  } as Pod;
}

export function podYaml(name: string, image = 'busybox:1.36', extra = ''): string {
  return `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  containers:\n  - name: c\n    image: ${image}\n${extra}`;
}
