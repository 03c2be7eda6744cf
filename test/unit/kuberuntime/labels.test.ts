import { describe, expect, it } from 'vitest';
import {
  CONTAINER_HASH_ANNOTATION,
  CONTAINER_NAME_LABEL,
  CONTAINER_PORTS_ANNOTATION,
  CONTAINER_PRESTOP_HANDLER_ANNOTATION,
  CONTAINER_RESTART_COUNT_ANNOTATION,
  CONTAINER_TERMINATION_MESSAGE_PATH_ANNOTATION,
  CONTAINER_TERMINATION_MESSAGE_POLICY_ANNOTATION,
  CONTAINER_TYPE_ANNOTATION,
  POD_NAME_LABEL,
  POD_NAMESPACE_LABEL,
  POD_TERMINATION_GRACE_PERIOD_ANNOTATION,
  POD_UID_LABEL,
} from '../../../src/k8s/cri-labels.js';
import {
  containerPortsJson,
  containerAnnotations,
  containerLabels,
  parseContainerMeta,
  parseSandboxLabels,
  sandboxAnnotations,
  sandboxLabels,
} from '../../../src/kuberuntime/labels.js';
import { UID, container, pod } from './fixtures.js';

describe('sandbox labels and annotations', () => {
  it('copy the pod labels and add the three identity labels', () => {
    expect(sandboxLabels(pod())).toEqual({
      component: 'web',
      tier: 'control-plane',
      'io.kubernetes.pod.name': 'web-node1',
      'io.kubernetes.pod.namespace': 'kube-system',
      'io.kubernetes.pod.uid': UID,
    });
  });

  it('identity labels win over a pod label of the same key', () => {
    const labels = sandboxLabels(pod({ labels: { [POD_NAME_LABEL]: 'spoofed' } }));
    expect(labels[POD_NAME_LABEL]).toBe('web-node1');
  });

  it('annotations are the pod annotations', () => {
    expect(sandboxAnnotations(pod())).toEqual(pod().metadata.annotations);
  });

  it('parse back to the identity; non-kubelet objects are undefined', () => {
    expect(parseSandboxLabels(sandboxLabels(pod()))).toEqual({
      podName: 'web-node1',
      podNamespace: 'kube-system',
      podUid: UID,
    });
    expect(parseSandboxLabels({ 'io.cri-containerd.kind': 'sandbox' })).toBeUndefined();
    expect(parseSandboxLabels({ [POD_NAME_LABEL]: 'x', [POD_NAMESPACE_LABEL]: 'y' })).toBeUndefined();
    expect(parseSandboxLabels(undefined)).toBeUndefined();
  });
});

describe('container labels and annotations', () => {
  const c = container({
    ports: [{ name: 'http', containerPort: 8080, hostPort: 8080, protocol: 'TCP' }],
    lifecycle: { preStop: { exec: { command: ['/bin/sh', '-c', 'sleep 1'] } } },
  });

  it("writes the ports as the kubelet's json.Marshal does, in Go field order whatever the manifest's order", () => {
    // kubeadm 1.34's probe port, keys as kubeadm serializes them (sorted), defaulted for a host-network pod.
    const kubeadm = container({
      ports: [{ containerPort: 2381, name: 'probe-port', protocol: 'TCP', hostPort: 2381 }],
    });
    expect(
      containerAnnotations(pod(), kubeadm, { hash: '0', restartCount: 0, type: 'container' })[
        CONTAINER_PORTS_ANNOTATION
      ],
    ).toBe('[{"name":"probe-port","hostPort":2381,"containerPort":2381,"protocol":"TCP"}]');
    // omitempty: no name, no hostPort, no protocol, no hostIP when unset.
    expect(
      containerPortsJson([
        { containerPort: 80 },
        { containerPort: 53, protocol: 'UDP', hostIP: '127.0.0.1', hostPort: 5353 },
      ]),
    ).toBe('[{"containerPort":80},{"hostPort":5353,"containerPort":53,"protocol":"UDP","hostIP":"127.0.0.1"}]');
  });

  it('labels are identity plus container name only, no pod labels', () => {
    expect(containerLabels(pod(), 'app')).toEqual({
      [POD_NAME_LABEL]: 'web-node1',
      [POD_NAMESPACE_LABEL]: 'kube-system',
      [POD_UID_LABEL]: UID,
      [CONTAINER_NAME_LABEL]: 'app',
    });
  });

  it('annotations carry what the kubelet writes, in its formats', () => {
    const a = containerAnnotations(pod(), c, { hash: 'a1b2c3', restartCount: 4, type: 'container' });
    expect(a).toEqual({
      [CONTAINER_HASH_ANNOTATION]: 'a1b2c3',
      [CONTAINER_RESTART_COUNT_ANNOTATION]: '4',
      [CONTAINER_TERMINATION_MESSAGE_PATH_ANNOTATION]: '/dev/termination-log',
      [CONTAINER_TERMINATION_MESSAGE_POLICY_ANNOTATION]: 'File',
      [POD_TERMINATION_GRACE_PERIOD_ANNOTATION]: '30',
      [CONTAINER_PRESTOP_HANDLER_ANNOTATION]: '{"exec":{"command":["/bin/sh","-c","sleep 1"]}}',
      [CONTAINER_PORTS_ANNOTATION]: '[{"name":"http","hostPort":8080,"containerPort":8080,"protocol":"TCP"}]',
      [CONTAINER_TYPE_ANNOTATION]: 'container',
    });
  });

  it('omits preStop and ports when the container has none', () => {
    const a = containerAnnotations(pod(), container(), { hash: '1', restartCount: 0, type: 'init' });
    expect(a).not.toHaveProperty(CONTAINER_PRESTOP_HANDLER_ANNOTATION);
    expect(a).not.toHaveProperty(CONTAINER_PORTS_ANNOTATION);
    expect(a[CONTAINER_TYPE_ANNOTATION]).toBe('init');
  });

  it('round-trips through parseContainerMeta', () => {
    const p = pod();
    const meta = parseContainerMeta(
      containerLabels(p, 'app'),
      containerAnnotations(p, c, { hash: 'deadbeef01', restartCount: 7, type: 'container' }),
    );
    expect(meta).toEqual({
      podName: 'web-node1',
      podNamespace: 'kube-system',
      podUid: UID,
      containerName: 'app',
      hash: 'deadbeef01',
      restartCount: 7,
      terminationGracePeriodSeconds: 30,
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
      type: 'container',
      preStop: c.lifecycle!.preStop,
      ports: c.ports,
    });
  });

  it('missing or broken annotations parse as zero / empty, as the kubelet reads old containers', () => {
    const labels = containerLabels(pod(), 'app');
    expect(parseContainerMeta(labels, {})).toEqual({
      podName: 'web-node1',
      podNamespace: 'kube-system',
      podUid: UID,
      containerName: 'app',
      hash: '0',
      restartCount: 0,
    });
    const broken = parseContainerMeta(labels, {
      [CONTAINER_HASH_ANNOTATION]: 'not-hex',
      [CONTAINER_RESTART_COUNT_ANNOTATION]: 'x',
      [CONTAINER_PORTS_ANNOTATION]: '{',
      [CONTAINER_PRESTOP_HANDLER_ANNOTATION]: '[]',
      [CONTAINER_TYPE_ANNOTATION]: 'sandbox',
    });
    expect(broken).toMatchObject({ hash: '0', restartCount: 0 });
    expect(broken).not.toHaveProperty('ports');
    expect(broken).not.toHaveProperty('preStop');
    expect(broken).not.toHaveProperty('type');
  });

  it('normalises hash case and leading zeros like a uint64 parse', () => {
    const meta = parseContainerMeta(containerLabels(pod(), 'app'), { [CONTAINER_HASH_ANNOTATION]: '00ABCdef' });
    expect(meta?.hash).toBe('abcdef');
  });

  it('is undefined without the container name label', () => {
    expect(parseContainerMeta(sandboxLabels(pod()), {})).toBeUndefined();
  });
});
