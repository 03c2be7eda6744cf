import { describe, expect, it } from 'vitest';
import { NamespaceMode, Protocol, SupplementalGroupsPolicy } from '../../../src/cri/cri-types.js';
import { parseResolvConf, podDnsConfig } from '../../../src/kuberuntime/dns.js';
import { podHostname, podHostnameAndDomain } from '../../../src/kuberuntime/pod-hostname.js';
import { buildSandboxConfig, podPortMappings } from '../../../src/kuberuntime/sandbox-config.js';
import { UID, container, pod } from './fixtures.js';

const RESOLV = `# generated
nameserver 10.0.0.2
nameserver 10.0.0.3
search corp.example. lab.example .
options ndots:2 timeout:1
options ndots:3
`;

describe('buildSandboxConfig', () => {
  const hostNet = pod({
    spec: {
      hostNetwork: true,
      containers: [container({ ports: [{ containerPort: 2379, hostPort: 2379, protocol: 'TCP' }] })],
    },
  });
  const cfg = buildSandboxConfig(hostNet, { podLogsDir: '/var/log/pods', attempt: 2, resolvConf: RESOLV });

  it('fills metadata, log directory, labels and annotations', () => {
    expect(cfg.metadata).toEqual({ name: 'web-node1', uid: UID, namespace: 'kube-system', attempt: 2 });
    expect(cfg.logDirectory).toBe(`/var/log/pods/kube-system_web-node1_${UID}`);
    expect(cfg.labels?.['io.kubernetes.pod.uid']).toBe(UID);
    expect(cfg.labels?.component).toBe('web');
    expect(cfg.annotations?.['kubernetes.io/config.source']).toBe('file');
  });

  it('host network: NODE network namespace, empty hostname, host DNS for ClusterFirst', () => {
    expect(cfg.hostname).toBe('');
    expect(cfg.linux?.securityContext?.namespaceOptions).toEqual({
      network: NamespaceMode.NODE,
      ipc: NamespaceMode.POD,
      pid: NamespaceMode.CONTAINER,
    });
    expect(cfg.dnsConfig).toEqual({
      servers: ['10.0.0.2', '10.0.0.3'],
      searches: ['corp.example', 'lab.example'],
      options: ['ndots:3', 'timeout:1'],
    });
    expect(cfg.portMappings).toEqual([{ protocol: Protocol.TCP, containerPort: 2379, hostPort: 2379, hostIp: '' }]);
  });

  it('sends the pod cgroup it is given (none by default) and runs the sandbox RuntimeDefault', () => {
    expect(cfg.linux?.cgroupParent).toBe('');
    const withParent = buildSandboxConfig(hostNet, {
      podLogsDir: '/l',
      attempt: 0,
      cgroupParent: `/kubepods/burstable/pod${UID}`,
    });
    expect(withParent.linux?.cgroupParent).toBe(`/kubepods/burstable/pod${UID}`);
    expect(cfg.linux?.securityContext?.seccomp).toEqual({ profileType: 0, localhostRef: '' });
  });

  it('pod network: hostname from the pod, ipc/pid modes, pod security context', () => {
    const p = pod({
      spec: {
        hostIPC: true,
        shareProcessNamespace: true,
        securityContext: {
          runAsUser: 1000,
          runAsGroup: 2000,
          fsGroup: 3000,
          supplementalGroups: [4000, 5000],
          sysctls: [{ name: 'net.core.somaxconn', value: '1024' }],
        },
        containers: [container(), container({ name: 'side', securityContext: { privileged: true } })],
      },
    });
    const c = buildSandboxConfig(p, { podLogsDir: '/logs', attempt: 0, resolvConf: RESOLV });
    expect(c.hostname).toBe('web-node1');
    const sc = c.linux!.securityContext!;
    expect(sc.namespaceOptions).toEqual({
      network: NamespaceMode.POD,
      ipc: NamespaceMode.NODE,
      pid: NamespaceMode.POD,
    });
    expect(sc.runAsUser).toEqual({ value: 1000 });
    expect(sc.runAsGroup).toEqual({ value: 2000 });
    expect(sc.supplementalGroups).toEqual([3000, 4000, 5000]);
    expect(sc.privileged).toBe(true);
    expect(c.linux!.sysctls).toEqual({ 'net.core.somaxconn': '1024' });
  });

  it('the pod’s supplementalGroupsPolicy as the CRI spells it: Merge unless Strict (KEP-3619)', () => {
    const of = (policy?: string) =>
      buildSandboxConfig(pod({ spec: { securityContext: policy ? { supplementalGroupsPolicy: policy } : {} } }), {
        podLogsDir: '/l',
        attempt: 0,
      }).linux?.securityContext?.supplementalGroupsPolicy;
    expect(of('Strict')).toBe(SupplementalGroupsPolicy.Strict);
    expect(of('Merge')).toBe(SupplementalGroupsPolicy.Merge);
    expect(of()).toBe(SupplementalGroupsPolicy.Merge);
  });

  it('hostPID gives a NODE pid namespace', () => {
    const c = buildSandboxConfig(pod({ spec: { hostPID: true } }), { podLogsDir: '/l', attempt: 0 });
    expect(c.linux?.securityContext?.namespaceOptions?.pid).toBe(NamespaceMode.NODE);
  });
});

describe('podPortMappings', () => {
  it('takes every port of regular containers, drops repeats within a container', () => {
    const p = pod({
      spec: {
        initContainers: [container({ name: 'init', ports: [{ containerPort: 1 }] })],
        containers: [
          container({
            ports: [
              { name: 'http', containerPort: 80, hostPort: 8080 },
              { name: 'http', containerPort: 81, hostPort: 8081 },
              { containerPort: 53, hostPort: 53, protocol: 'UDP' },
              { containerPort: 53, hostPort: 53, protocol: 'UDP' },
              { containerPort: 9000 },
            ],
          }),
          container({
            name: 'b',
            ports: [{ name: 'http', containerPort: 80, hostPort: 8080, hostIP: '127.0.0.1', protocol: 'SCTP' }],
          }),
        ],
      },
    });
    expect(podPortMappings(p)).toEqual([
      { protocol: Protocol.TCP, containerPort: 80, hostPort: 8080, hostIp: '' },
      { protocol: Protocol.UDP, containerPort: 53, hostPort: 53, hostIp: '' },
      { protocol: Protocol.TCP, containerPort: 9000, hostPort: 0, hostIp: '' },
      { protocol: Protocol.SCTP, containerPort: 80, hostPort: 8080, hostIp: '127.0.0.1' },
    ]);
  });
});

describe('podDnsConfig', () => {
  it('parses resolv.conf like the kubelet', () => {
    expect(parseResolvConf(RESOLV)).toEqual({
      servers: ['10.0.0.2', '10.0.0.3'],
      searches: ['corp.example', 'lab.example'],
      options: ['ndots:3', 'timeout:1'],
    });
    expect(parseResolvConf('; c\nsearch a\nsearch b c\n')).toEqual({ servers: [], searches: ['b', 'c'], options: [] });
  });

  it('Default uses the host even on a pod network', () => {
    expect(podDnsConfig(pod({ spec: { dnsPolicy: 'Default' } }), RESOLV).servers).toEqual(['10.0.0.2', '10.0.0.3']);
  });

  it('ClusterFirst on a pod network uses cluster DNS with ndots:5', () => {
    expect(podDnsConfig(pod(), RESOLV, { clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local' })).toEqual({
      servers: ['10.96.0.10'],
      searches: ['kube-system.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example', 'lab.example'],
      options: ['ndots:5'],
    });
  });

  it('ClusterFirst without cluster DNS falls back to the host', () => {
    expect(podDnsConfig(pod(), RESOLV).servers).toEqual(['10.0.0.2', '10.0.0.3']);
  });

  it('ClusterFirstWithHostNet on host network uses cluster DNS', () => {
    const p = pod({ spec: { hostNetwork: true, dnsPolicy: 'ClusterFirstWithHostNet' } });
    expect(podDnsConfig(p, RESOLV, { clusterDNS: ['10.96.0.10'], clusterDomain: 'c.local' }).servers).toEqual([
      '10.96.0.10',
    ]);
  });

  it('None takes spec.dnsConfig only', () => {
    const p = pod({
      spec: {
        dnsPolicy: 'None',
        dnsConfig: {
          nameservers: ['1.1.1.1'],
          searches: ['x.example'],
          options: [{ name: 'ndots', value: '1' }, { name: 'edns0' }],
        },
      },
    });
    expect(podDnsConfig(p, RESOLV)).toEqual({
      servers: ['1.1.1.1'],
      searches: ['x.example'],
      options: ['ndots:1', 'edns0'],
    });
  });

  it('merges dnsConfig into the host config, pod options override by name, and cuts to limits', () => {
    const p = pod({
      spec: {
        hostNetwork: true,
        dnsConfig: {
          nameservers: ['10.0.0.3', '9.9.9.9', '8.8.8.8'],
          searches: ['lab.example', 'more.example'],
          options: [{ name: 'ndots', value: '7' }],
        },
      },
    });
    expect(podDnsConfig(p, RESOLV)).toEqual({
      servers: ['10.0.0.2', '10.0.0.3', '9.9.9.9'],
      searches: ['corp.example', 'lab.example', 'more.example'],
      options: ['ndots:7', 'timeout:1'],
    });
  });

  it('no resolv.conf: localhost and search "." as the kubelet with --resolv-conf=""', () => {
    expect(podDnsConfig(pod({ spec: { hostNetwork: true } }), undefined)).toEqual({
      servers: ['127.0.0.1'],
      searches: ['.'],
      options: [],
    });
  });
});

describe('podHostname', () => {
  it('uses spec.hostname, truncates to 63 and trims trailing - and .', () => {
    expect(podHostname(pod({ spec: { hostname: 'h1' } }))).toBe('h1');
    const long = pod();
    long.metadata.name = 'a'.repeat(62) + '-.b';
    expect(podHostname(long)).toBe('a'.repeat(62));
  });

  it('builds the FQDN when asked and refuses one over 64 characters', () => {
    const p = pod({ spec: { hostname: 'h', subdomain: 's', setHostnameAsFQDN: true } });
    expect(podHostname(p, 'cluster.local')).toBe('h.s.kube-system.svc.cluster.local');
    expect(() => podHostname(p, 'x'.repeat(60))).toThrow(/too long \(64 characters is the max/);
  });

  it('takes spec.hostnameOverride whole, in place of hostname and subdomain, in the sandbox and /etc/hosts (KEP-4762)', () => {
    const p = pod({ spec: { hostname: 'h', subdomain: 's', hostnameOverride: 'app.example.test' } });
    expect(podHostname(p, 'cluster.local')).toBe('app.example.test');
    expect(buildSandboxConfig(p, { podLogsDir: '/var/log/pods', attempt: 0, resolvConf: RESOLV }).hostname).toBe(
      'app.example.test',
    );
    expect(podHostnameAndDomain(p, 'cluster.local')).toEqual({ hostname: 'app.example.test', domain: '' });
    const sixtyFour = 'a'.repeat(30) + '.' + 'b'.repeat(33);
    expect(podHostname(pod({ spec: { hostnameOverride: sixtyFour } }))).toBe(sixtyFour);
    // Without it, as before.
    expect(podHostnameAndDomain(pod({ spec: { hostname: 'h', subdomain: 's' } }), 'cluster.local')).toEqual({
      hostname: 'h',
      domain: 's.kube-system.svc.cluster.local',
    });
  });
});

describe('sandbox isolation fields', () => {
  it("SELinux: the pod's options on the sandbox (generatePodSandboxLinuxConfig)", () => {
    const opts = { user: 'system_u', role: 'system_r', type: 'container_t', level: 's0:c1,c2' };
    const sb = buildSandboxConfig(pod({ spec: { securityContext: { seLinuxOptions: opts } } }), {
      podLogsDir: '/var/log/pods',
      attempt: 0,
    });
    expect(sb.linux?.securityContext?.selinuxOptions).toEqual(opts);
    expect(
      buildSandboxConfig(pod(), { podLogsDir: '/var/log/pods', attempt: 0 }).linux?.securityContext?.selinuxOptions,
    ).toBeUndefined();
  });

  it('the namespaces it is given, with the user namespace', () => {
    const namespaceOptions = {
      network: NamespaceMode.POD,
      ipc: NamespaceMode.POD,
      pid: NamespaceMode.CONTAINER,
      usernsOptions: {
        mode: NamespaceMode.POD,
        uids: [{ hostId: 131072, containerId: 0, length: 65536 }],
        gids: [{ hostId: 131072, containerId: 0, length: 65536 }],
      },
    };
    const sb = buildSandboxConfig(pod({ spec: { hostUsers: false } }), {
      podLogsDir: '/var/log/pods',
      attempt: 0,
      namespaceOptions,
    });
    expect(sb.linux?.securityContext?.namespaceOptions).toEqual(namespaceOptions);
  });
});
