// cleanupPod with names read back from runtime labels: a name that could never have named a
// directory of ours is skipped with a log line, and the removal never follows a symlink.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../../src/log/logger.js';
import type { ImageService, RuntimeService } from '../../../src/cri/cri-types.js';
import { CriPodRuntime } from '../../../src/kuberuntime/pod-operations.js';
import { useTmpDir } from '../../support/tmp.js';

const tmp = useTmpDir('pod-cleanup');
const UID = '0123456789abcdef0123456789abcdef';

function podRuntime() {
  const { logger, lines } = memoryLogger();
  const rootDir = path.join(tmp, 'root');
  const podLogsDir = path.join(tmp, 'logs', 'pods');
  // cleanupPod makes no CRI call.
  const rt = new CriPodRuntime({
    runtime: {} as RuntimeService,
    images: {} as ImageService,
    rootDir,
    podLogsDir,
    nodeName: 'node1',
    nodeIP: '10.0.0.1',
    resolvConf: '/etc/resolv.conf',
    logger,
  });
  return { rt, lines, rootDir, podLogsDir };
}

describe('cleanupPod', () => {
  it('removes the pod and log directories without following symlinks in them', async () => {
    const { rt, rootDir, podLogsDir } = podRuntime();
    const outside = path.join(tmp, 'outside');
    fs.mkdirSync(outside, { recursive: true });
    fs.writeFileSync(path.join(outside, 'precious'), 'x');
    const pod = path.join(rootDir, 'pods', UID, 'volumes', 'kubernetes.io~empty-dir', 'data');
    const logs = path.join(podLogsDir, `kube-system_etcd-node1_${UID}`, 'etcd');
    fs.mkdirSync(pod, { recursive: true });
    fs.mkdirSync(logs, { recursive: true });
    fs.symlinkSync(outside, path.join(pod, 'escape'));
    fs.symlinkSync(outside, path.join(logs, '0.log'));
    await rt.cleanupPod(UID, 'kube-system', 'etcd-node1');
    expect(fs.existsSync(path.join(rootDir, 'pods', UID))).toBe(false);
    expect(fs.existsSync(path.dirname(logs))).toBe(false);
    expect(fs.readdirSync(outside)).toEqual(['precious']);
  });

  it.each([
    ['a uid', '../../../../ESCAPED/evil', 'kube-system', 'etcd-node1'],
    ['a namespace', UID, '../..', 'etcd-node1'],
    ['a pod name', UID, 'kube-system', '../../x'],
  ])('skips, with a log line, %s that is not a valid path component', async (_what, uid, namespace, name) => {
    const { rt, lines } = podRuntime();
    const escaped = path.join(tmp, 'ESCAPED', 'evil');
    fs.mkdirSync(escaped, { recursive: true });
    await rt.cleanupPod(uid, namespace, name);
    expect(fs.existsSync(escaped)).toBe(true);
    expect(lines.join('\n')).toMatch(
      /Not removing pod directories: a name read back from the runtime is not a valid path component/,
    );
  });
});
