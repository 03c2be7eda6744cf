// Probes against a real private containerd: an exec liveness probe (`cat /tmp/healthy`) through CRI
// ExecSync that turns from success to failure when the file goes, an exec timeout seen as a
// failure, and an httpGet readiness probe on busybox httpd in a host-network container, addressed
// by a named port on the pod (node) IP.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Container } from 'kubernetes-types/core/v1';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startContainerd, type PrivateContainerd } from '../../../dev/containerd.js';
import { importTestImages, TEST_IMAGES } from '../../../dev/images.js';
import type { StaticPod } from '../../../src/config/types.js';
import { buildContainerConfig } from '../../../src/kuberuntime/container-config.js';
import { connectRuntime, type RuntimeConnection } from '../../../src/cri/cri-client.js';
import { ensureImage } from '../../../src/kuberuntime/images.js';
import { buildSandboxConfig } from '../../../src/kuberuntime/sandbox-config.js';
import { prepareVolumes, removePodDirs } from '../../../src/node/volumes.js';
import { runExecProbe } from '../../../src/prober/exec.js';
import { ProberManager } from '../../../src/prober/prober-manager.js';
import type { ProbeFailureEvent, ProbeResultEvent } from '../../../src/prober/types.js';
import { freePort } from '../../support/ports.js';
import { useTmpDir } from '../../support/tmp.js';
import { waitFor } from '../../support/wait.js';

// Registered first so that it runs last, after containerd is stopped.
const tmp = useTmpDir('prober-e2e');
const rootDir = path.join(tmp, 'root');
const podLogsDir = path.join(tmp, 'logs');
const UID = 'e2e0000000000000000000000001' + process.pid.toString(16).padStart(4, '0').slice(-4);
const POD_IP = '127.0.0.1';

let cd: PrivateContainerd | undefined;
let cri: RuntimeConnection | undefined;
let prober: ProberManager | undefined;
const sandboxes: string[] = [];
const containers: string[] = [];

function podWith(container: Container): StaticPod['pod'] {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'probes-node1',
      namespace: 'default',
      uid: UID,
      annotations: { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.hash': UID },
    },
    spec: {
      hostNetwork: true,
      nodeName: 'node1',
      dnsPolicy: 'ClusterFirst',
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 2,
      securityContext: {},
      containers: [container],
    },
  };
}

beforeAll(async () => {
  cd = await startContainerd({ name: 'prober' });
  await importTestImages(cd);
  cri = await connectRuntime(cd.endpoint);
});

afterAll(async () => {
  prober?.stop();
  const rt = cri?.runtime;
  for (const id of containers) {
    await rt?.stopContainer(id, 0).catch(() => undefined);
    await rt?.removeContainer(id).catch(() => undefined);
  }
  for (const id of sandboxes) {
    await rt?.stopPodSandbox(id).catch(() => undefined);
    await rt?.removePodSandbox(id).catch(() => undefined);
  }
  rt?.close();
  await cd?.stop();
  await removePodDirs(rootDir, UID).catch(() => undefined);
});

describe('probes on a running host-network container', () => {
  let port = 0;
  let pod: StaticPod['pod'];
  let app: Container;
  let containerId = '';
  const results: ProbeResultEvent[] = [];
  const failures: ProbeFailureEvent[] = [];

  it('runs busybox httpd with a health file', async () => {
    port = await freePort();
    app = {
      name: 'app',
      image: TEST_IMAGES.busybox,
      imagePullPolicy: 'IfNotPresent',
      command: [
        '/bin/sh',
        '-c',
        `mkdir -p /www && echo ok > /www/healthz && touch /tmp/healthy && exec httpd -f -p ${POD_IP}:${port} -h /www`,
      ],
      ports: [{ name: 'http', containerPort: port, protocol: 'TCP' }],
      livenessProbe: {
        exec: { command: ['cat', '/tmp/healthy'] },
        periodSeconds: 1,
        timeoutSeconds: 5,
        failureThreshold: 2,
      },
      readinessProbe: {
        httpGet: { port: 'http', path: '/healthz', scheme: 'HTTP' },
        periodSeconds: 1,
        timeoutSeconds: 2,
        failureThreshold: 1,
      },
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
    };
    pod = podWith(app);
    const sb = buildSandboxConfig(pod, { podLogsDir, attempt: 0 });
    fs.mkdirSync(path.join(sb.logDirectory!, app.name), { recursive: true, mode: 0o755 });
    const sandboxId = await cri!.runtime.runPodSandbox(sb);
    sandboxes.push(sandboxId);
    const { imageRef } = await ensureImage(cri!.images, app, sb);
    const mounts = await prepareVolumes(pod, app, { rootDir });
    const config = buildContainerConfig(pod, app, {
      restartCount: 0,
      imageRef,
      type: 'container',
      nodeName: 'node1',
      hostIP: POD_IP,
      podIPs: [],
      mounts,
      nodeMemoryCapacityBytes: os.totalmem(),
    });
    containerId = await cri!.runtime.createContainer(sandboxId, config, sb);
    containers.push(containerId);
    await cri!.runtime.startContainer(containerId);
  });

  it('reports the container alive and ready', async () => {
    prober = new ProberManager({ runtime: cri!.runtime });
    prober.onResult((e) => results.push(e));
    prober.onFailure((e) => failures.push(e));
    prober.addPod(pod, POD_IP);
    expect(prober.readiness(UID, 'app')).toBe(false);
    const st = await cri!.runtime.containerStatus(containerId);
    prober.containerStarted(UID, 'app', containerId, Math.floor(st.startedAt / 1e6));
    await waitFor(() => prober!.readiness(UID, 'app'), {
      timeoutMs: 30_000,
      what: 'readiness (httpGet on busybox httpd) to pass',
    });
    await waitFor(() => results.some((r) => r.probeType === 'liveness' && r.result === 'success'), {
      timeoutMs: 30_000,
      what: 'a liveness success (exec cat /tmp/healthy)',
    });
    expect(failures).toEqual([]);
    expect(prober.started(UID, 'app')).toBe(true);
  });

  it('an exec that outlives its timeout is a failure, not an error', async () => {
    const r = await runExecProbe(cri!.runtime, containerId, ['sleep', '5'], 1);
    expect(r.result).toBe('failure');
    expect(r.output).toMatch(/timed out/);
  });

  it('readiness turns false when the health page goes (404)', async () => {
    const rm = await cri!.runtime.execSync(containerId, ['rm', '/www/healthz'], 10);
    expect(rm.exitCode).toBe(0);
    await waitFor(() => prober!.readiness(UID, 'app') === false, {
      timeoutMs: 30_000,
      what: 'readiness to turn false',
    });
    expect(results.find((r) => r.probeType === 'readiness' && r.result === 'failure')?.output).toBe(
      'HTTP probe failed with statuscode: 404',
    );
  });

  it('liveness fails when /tmp/healthy is removed, and the failure is reported for a restart', async () => {
    const rm = await cri!.runtime.execSync(containerId, ['rm', '/tmp/healthy'], 10);
    expect(rm.exitCode).toBe(0);
    const f = await waitFor(() => failures[0], { timeoutMs: 30_000, what: 'a livenessFailed event' });
    expect(f).toMatchObject({
      type: 'livenessFailed',
      podUid: UID,
      containerName: 'app',
      containerId,
      message: 'Container app failed liveness probe, will be restarted',
      reason: 'LivenessProbe',
    });
    expect(f.output).toMatch(/No such file or directory/);
  });
});
