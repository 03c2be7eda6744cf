import { describe, expect, it } from 'vitest';
import { safeSysctls, sysctlNamespace, sysctlPatternProblem, sysctlWithDots } from '../../../src/k8s/sysctls.js';

describe('sysctl facts', () => {
  it('the safe sysctls of a kernel: the ones it namespaces', () => {
    expect(safeSysctls('6.1.0-18-amd64')).toEqual([
      'kernel.shm_rmid_forced',
      'net.ipv4.ip_local_port_range',
      'net.ipv4.tcp_syncookies',
      'net.ipv4.ping_group_range',
      'net.ipv4.ip_unprivileged_port_start',
      'net.ipv4.ip_local_reserved_ports',
      'net.ipv4.tcp_keepalive_time',
      'net.ipv4.tcp_fin_timeout',
      'net.ipv4.tcp_keepalive_intvl',
      'net.ipv4.tcp_keepalive_probes',
      'net.ipv4.tcp_rmem',
      'net.ipv4.tcp_wmem',
    ]);
    expect(safeSysctls('4.5.0')).not.toContain('net.ipv4.tcp_fin_timeout');
    expect(safeSysctls('4.5.0')).toContain('net.ipv4.tcp_keepalive_time');
    expect(safeSysctls('3.10.0')).not.toContain('net.ipv4.ip_local_reserved_ports');
    expect(safeSysctls('garbage')).toHaveLength(7);
  });

  it('namespaces: IPC for kernel.sem, kernel.shm*, kernel.msg*, fs.mqueue.*; net for net.*; none for the rest', () => {
    expect(
      [
        'kernel.sem',
        'kernel.shmmax',
        'kernel.msgmnb',
        'fs.mqueue.msg_max',
        'net.core.somaxconn',
        'kernel.pid_max',
        'vm.swappiness',
      ].map(sysctlNamespace),
    ).toEqual(['ipc', 'ipc', 'ipc', 'ipc', 'net', undefined, undefined]);
  });

  it("reads the '/' spelling as sysctl(8) does", () => {
    expect(sysctlWithDots('net/ipv4/conf/eno2.100/rp_filter')).toBe('net.ipv4.conf.eno2/100.rp_filter');
    expect(sysctlWithDots('net.ipv4.conf.eno2/100.rp_filter')).toBe('net.ipv4.conf.eno2/100.rp_filter');
    expect(sysctlWithDots('kernel')).toBe('kernel');
  });

  it('refuses an allowlist entry as the kubelet does at start', () => {
    expect(sysctlPatternProblem('kernel.msg*')).toBeUndefined();
    expect(sysctlPatternProblem('net/core/somaxconn')).toBeUndefined();
    expect(sysctlPatternProblem('kernel.pid_max')).toBe('the sysctl "kernel.pid_max" are not known to be namespaced');
    expect(sysctlPatternProblem('vm.*')).toBe('the sysctls "vm.*" are not known to be namespaced');
    expect(sysctlPatternProblem('Net.Core')).toMatch(
      /^sysctl "Net.Core" must have at most 253 characters and match regex \(\[a-z0-9\]/,
    );
  });
});
