// Security contexts and the profile annotations as the API server checks them, in its words.
import { describe, expect, it } from 'vitest';
import { pod } from '../helpers';
import { c, problems } from './problems';

const SYSCTL_MSG =
  'must have at most 253 characters and match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$';
const withSysctls = (sysctls: unknown[], extra: Record<string, unknown> = {}) =>
  pod({ securityContext: { sysctls }, ...extra });

describe('sysctls', () => {
  it('refuses a name not of the kernel form, and a name twice', () => {
    expect(problems(withSysctls([{ name: 'kernel.shm_rmid_forced\n', value: '1' }]))).toEqual([
      `spec.securityContext.sysctls[0].name: Invalid value: "kernel.shm_rmid_forced\\n": ${SYSCTL_MSG}`,
    ]);
    expect(problems(withSysctls([{ name: '../../proc', value: '1' }]))).toEqual([
      `spec.securityContext.sysctls[0].name: Invalid value: "../../proc": ${SYSCTL_MSG}`,
    ]);
    expect(
      problems(
        withSysctls([
          { name: 'kernel.msgmax', value: '1' },
          { name: 'kernel.msgmax', value: '2' },
        ]),
      ),
    ).toEqual(['spec.securityContext.sysctls[1].name: Duplicate value: "kernel.msgmax"']);
    expect(problems(withSysctls([{ name: 'net/ipv4/ip_local_port_range', value: '1024 65000' }]))).toEqual([]);
  });
  it('refuses a namespaced sysctl the pod would set on the host (a static pod is new; an API pod may predate the rule)', () => {
    const host = withSysctls(
      [
        { name: 'net.ipv4.ip_forward', value: '1' },
        { name: 'kernel.shmmax', value: '1' },
      ],
      { hostNetwork: true, hostIPC: true },
    );
    expect(problems(host)).toEqual([
      `spec.securityContext.sysctls[0].name: Invalid value: "net.ipv4.ip_forward": may not be specified when 'hostNetwork' is true`,
      `spec.securityContext.sysctls[1].name: Invalid value: "kernel.shmmax": may not be specified when 'hostIPC' is true`,
    ]);
    expect(problems(withSysctls([{ name: 'net/core/somaxconn', value: '1' }], { hostNetwork: true }))).toHaveLength(1);
    expect(problems({ ...host, spec: { ...host.spec!, nodeName: 'node-a' } }, 'api')).toEqual([]);
  });
});

describe('user and group IDs, profiles, procMount, host namespaces', () => {
  it('IDs are 0 to MaxInt32', () => {
    expect(problems(pod({ securityContext: { runAsUser: -1, supplementalGroups: [2147483648] } }))).toEqual([
      'spec.securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive',
      'spec.securityContext.supplementalGroups[0]: Invalid value: 2147483648: must be between 0 and 2147483647, inclusive',
    ]);
    expect(problems(pod({ containers: [c({ securityContext: { runAsGroup: -5 } })] }))).toEqual([
      'spec.containers[0].securityContext.runAsGroup: Invalid value: -5: must be between 0 and 2147483647, inclusive',
    ]);
  });
  it('a seccomp profile has a known type, a localhost one inside the profile root', () => {
    expect(
      problems(
        pod({
          containers: [
            c({ securityContext: { seccompProfile: { type: 'Localhost', localhostProfile: '../../etc/x.json' } } }),
          ],
        }),
      ),
    ).toEqual([
      `spec.containers[0].securityContext.seccompProfile.localhostProfile: Invalid value: "../../etc/x.json": must not contain '..'`,
    ]);
    expect(problems(pod({ securityContext: { seccompProfile: { type: 'Localhost' } } }))).toEqual([
      'spec.securityContext.seccompProfile.localhostProfile: Required value: must be set when seccomp type is Localhost',
    ]);
    expect(problems(pod({ securityContext: { seccompProfile: { type: 'Default' } } }))).toEqual([
      'spec.securityContext.seccompProfile.type: Unsupported value: "Default": supported values: "Localhost", "RuntimeDefault", "Unconfined"',
    ]);
  });
  it('an AppArmor profile has a known type and an unpadded localhost name', () => {
    expect(
      problems(pod({ securityContext: { appArmorProfile: { type: 'Localhost', localhostProfile: ' k8s-x ' } } })),
    ).toEqual([
      'spec.securityContext.appArmorProfile.localhostProfile: Invalid value: " k8s-x ": must not be padded with whitespace',
    ]);
    expect(
      problems(
        pod({
          containers: [c({ securityContext: { appArmorProfile: { type: 'RuntimeDefault', localhostProfile: 'x' } } })],
        }),
      ),
    ).toEqual([
      'spec.containers[0].securityContext.appArmorProfile.localhostProfile: Invalid value: "x": can only be set when AppArmor type is Localhost',
    ]);
  });
  it('procMount values, and Unmasked only in a user namespace; no host namespaces in one', () => {
    expect(problems(pod({ containers: [c({ securityContext: { procMount: 'Unmasked' } })] }))).toEqual([
      'spec.containers[0].securityContext.procMount: Invalid value: "Unmasked": `hostUsers` must be false to use `Unmasked`',
    ]);
    expect(problems(pod({ hostUsers: false, hostNetwork: true, hostPID: true }))).toEqual([
      'spec.hostNetwork: Forbidden: when `hostUsers` is false',
      'spec.HostPID: Forbidden: when `hostUsers` is false',
    ]);
    expect(problems(pod({ shareProcessNamespace: true, hostPID: true }))).toEqual([
      'spec.securityContext.shareProcessNamespace: Invalid value: true: ShareProcessNamespace and HostPID cannot both be enabled',
    ]);
  });
});

describe('AppArmor and seccomp annotations', () => {
  const annotated = (annotations: Record<string, string>, spec: Record<string, unknown> = {}) =>
    pod(spec, { name: 'web', annotations });
  const A = 'container.apparmor.security.beta.kubernetes.io/';
  it('an AppArmor annotation names a container of the pod and a known profile form', () => {
    expect(problems(annotated({ [`${A}etcd`]: 'runtime/default' }))).toEqual([
      `metadata.annotations[${A}etcd]: Invalid value: "etcd": container not found`,
    ]);
    expect(problems(annotated({ [`${A}c`]: 'k8s-profile' }))).toEqual([
      `metadata.annotations[${A}c]: Invalid value: "k8s-profile": invalid AppArmor profile name: "k8s-profile"`,
    ]);
    expect(problems(annotated({ [`${A}c`]: 'localhost/k8s-profile' }))).toEqual([]);
  });
  it('and agrees with the field it stands for', () => {
    expect(
      problems(
        annotated({ [`${A}c`]: 'unconfined' }, { securityContext: { appArmorProfile: { type: 'RuntimeDefault' } } }),
      ),
    ).toEqual([
      'spec.containers[0].securityContext.appArmorProfile.type: Forbidden: apparmor type in annotation and field must match',
    ]);
  });
  it('a seccomp annotation names a known profile, a localhost one inside the profile root', () => {
    expect(problems(annotated({ 'seccomp.security.alpha.kubernetes.io/pod': 'localhost/../../x' }))).toEqual([
      `metadata.annotations.seccomp.security.alpha.kubernetes.io/pod: Invalid value: "../../x": must not contain '..'`,
    ]);
    expect(problems(annotated({ 'container.seccomp.security.alpha.kubernetes.io/c': 'default' }))).toEqual([
      'metadata.annotations.container.seccomp.security.alpha.kubernetes.io/c: Invalid value: "default": must be a valid seccomp profile',
    ]);
    expect(
      problems(
        annotated(
          { 'seccomp.security.alpha.kubernetes.io/pod': 'runtime/default' },
          { securityContext: { seccompProfile: { type: 'Unconfined' } } },
        ),
      ),
    ).toEqual(['spec.securityContext.seccompProfile.type: Forbidden: seccomp type in annotation and field must match']);
  });
  it('annotation and field must agree only when the pod is created: an API pod keeps a seccomp annotation changed since', () => {
    // ValidatePodCreate alone checks the agreement (validateSeccompAnnotationsAndFields,
    // validateAppArmorAnnotationsAndFieldsMatchOnCreate); an update may change a seccomp annotation
    // (only AppArmor and mirror annotations are immutable) and ValidatePodUpdate checks only its form.
    const changed = annotated(
      {
        'seccomp.security.alpha.kubernetes.io/pod': 'unconfined',
        'container.seccomp.security.alpha.kubernetes.io/c': 'unconfined',
      },
      {
        nodeName: 'node-a',
        securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
        containers: [c({ securityContext: { seccompProfile: { type: 'RuntimeDefault' } } })],
      },
    );
    expect(problems(changed, 'api')).toEqual([]);
    expect(problems(changed)).toEqual([
      'spec.securityContext.seccompProfile.type: Forbidden: seccomp type in annotation and field must match',
      'spec.containers[0].securityContext.seccompProfile.type: Forbidden: seccomp type in annotation and field must match',
    ]);
    // The form is checked on update too.
    expect(
      problems(annotated({ 'seccomp.security.alpha.kubernetes.io/pod': 'default' }, { nodeName: 'node-a' }), 'api'),
    ).toEqual([
      'metadata.annotations.seccomp.security.alpha.kubernetes.io/pod: Invalid value: "default": must be a valid seccomp profile',
    ]);
  });
});
