// Pod-level fields the API server checks on create, in its words: host alias IPs and nameservers
// (written into the pod's /etc/hosts and resolv.conf), the active deadline, class names, the
// preemption policy, the OS and scheduling gates.
import { describe, expect, it } from 'vitest';
import { isValidIP } from '../../../../src/config/validate/api-formats';
import { pod } from '../helpers';
import { problems } from './problems';

const IP_MSG = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

describe('IP addresses as ParseIPSloppy reads them', () => {
  it.each([
    '1.2.3.4',
    '010.001.1.1',
    '0.0.0.0',
    '::',
    '::1',
    '2001:db8::ffff',
    '::ffff:1.2.3.4',
    '1:2:3:4:5:6:7:8',
    '1:2:3:4:5:6:1.2.3.4',
    '1:2:3:4:5:6:7::',
    'FE80::1',
  ])('accepts %s', (ip) => expect(isValidIP(ip)).toEqual([]));
  it.each([
    '',
    '1.2.3',
    '1.2.3.4.',
    '256.1.1.1',
    ' 1.2.3.4',
    '1.2.3.4 ',
    '1.2.3.4\n5.6.7.8 evil',
    'fe80::1%eth0',
    '[::1]',
    '1::2::3',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7:8::',
    '12345::',
    'localhost',
    '1.2.3.4/32',
    ':1:2',
  ])('refuses %j', (ip) => expect(isValidIP(ip)).toEqual([IP_MSG]));
});

describe('hostAliases and dnsConfig', () => {
  it('refuses a host alias IP with a newline (it would become a second /etc/hosts line), and one that is no IP', () => {
    expect(problems(pod({ hostAliases: [{ ip: '1.2.3.4\n5.6.7.8 evil', hostnames: ['ok.local'] }] }))).toEqual([
      `spec.hostAliases[0].ip: Invalid value: "1.2.3.4\\n5.6.7.8 evil": ${IP_MSG}`,
    ]);
    expect(problems(pod({ hostAliases: [{ ip: 'registry.local', hostnames: ['r'] }, { hostnames: ['x'] }] }))).toEqual([
      `spec.hostAliases[0].ip: Invalid value: "registry.local": ${IP_MSG}`,
      `spec.hostAliases[1].ip: Invalid value: "": ${IP_MSG}`,
    ]);
    expect(
      problems(
        pod({
          hostAliases: [
            { ip: '10.0.0.1', hostnames: ['etcd.local'] },
            { ip: 'fd00::1', hostnames: ['v6'] },
          ],
        }),
      ),
    ).toEqual([]);
  });
  it('refuses a nameserver that is not an IP (resolv.conf)', () => {
    expect(
      problems(pod({ dnsPolicy: 'None', dnsConfig: { nameservers: ['8.8.8.8', '1.1.1.1\nsearch evil'] } })),
    ).toEqual([`spec.dnsConfig.nameservers[1]: Invalid value: "1.1.1.1\\nsearch evil": ${IP_MSG}`]);
  });
});

describe('deadline, classes, policies, OS, scheduling gates', () => {
  it('activeDeadlineSeconds is 1 to MaxInt32', () => {
    expect(problems(pod({ activeDeadlineSeconds: 0 }))).toEqual([
      'spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive',
    ]);
    expect(problems(pod({ activeDeadlineSeconds: 2147483648 }))).toEqual([
      'spec.activeDeadlineSeconds: Invalid value: 2147483648: must be between 1 and 2147483647, inclusive',
    ]);
    expect(problems(pod({ activeDeadlineSeconds: 1 }))).toEqual([]);
  });
  it('priorityClassName and runtimeClassName are DNS subdomains; the preemption policy and OS are known values', () => {
    expect(problems(pod({ priorityClassName: 'System Node Critical' }))).toEqual([
      `spec.priorityClassName: Invalid value: "System Node Critical": ${SUBDOMAIN_MSG}`,
    ]);
    expect(problems(pod({ runtimeClassName: 'gVisor' }))).toEqual([
      `spec.runtimeClassName: Invalid value: "gVisor": ${SUBDOMAIN_MSG}`,
    ]);
    expect(problems(pod({ preemptionPolicy: 'Sometimes' }))).toEqual([
      'spec.preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"',
    ]);
    expect(problems(pod({ os: { name: 'plan9' } }))).toEqual([
      'spec.os: Unsupported value: "plan9": supported values: "linux", "windows"',
    ]);
    expect(
      problems(
        pod({
          priorityClassName: 'system-node-critical',
          runtimeClassName: 'runc',
          preemptionPolicy: 'Never',
          os: { name: 'linux' },
        }),
      ),
    ).toEqual([]);
  });
  it('scheduling gates are qualified names, each once, and a static pod (bound to its node) may have none', () => {
    expect(problems(pod({ schedulingGates: [{ name: 'example.com/wait' }] }))).toEqual([
      'spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared',
    ]);
    expect(problems(pod({ nodeName: 'node-a', schedulingGates: [{ name: 'a' }, { name: 'a' }] }), 'api')).toEqual([
      'spec.schedulingGates[1]: Duplicate value: "a"',
      'spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared',
    ]);
  });
});
