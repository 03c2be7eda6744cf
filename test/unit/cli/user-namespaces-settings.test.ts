// userNamespaces.idsPerPod: read from the KubeletConfiguration, checked as the kubelet's
// configuration validation checks it (the agent does not start with a value the kubelet refuses),
// and handed to the user namespace manager as the size of each pod's block.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log/logger.js';
import { nodeUserNamespaces } from '../../../src/node/userns/node-user-namespaces.js';
import { useTmpDir } from '../../support/tmp.js';
import { resolveArgv, useConfigFiles } from './resolve-argv.js';

const { configFile } = useConfigFiles('bootlet-userns-settings-');
const tmp = useTmpDir('userns-settings');
const logger = createLogger({ format: 'text', verbosity: 0, sink: { write: () => {} } });

describe('userNamespaces.idsPerPod', () => {
  it("defaults to the kubelet's 65536", () => {
    expect(resolveArgv([]).userNamespacesIdsPerPod).toBe(65536);
  });

  it('is read from the file and counts as applied (no start-up warning)', () => {
    const o = resolveArgv([`--config=${configFile('userNamespaces:\n  idsPerPod: 1048576\n')}`]);
    expect(o.userNamespacesIdsPerPod).toBe(1048576);
    expect(o.notes.notImplemented).toEqual([]);
  });

  it.each([
    [0, 'must not be less than 65536'],
    [65535, 'must not be less than 65536'],
    [100000, 'must be a multiple of 65536'],
    [4294967296, 'must not be more than 4294967295'],
  ])("refuses %d in the kubelet's words", (value, words) => {
    const f = configFile(`userNamespaces:\n  idsPerPod: ${value}\n`);
    expect(() => resolveArgv([`--config=${f}`])).toThrow(`userNamespaces.idsPerPod: ${words}`);
  });

  it("reaches the node's user namespace manager: the node range is checked in its blocks, each pod gets one", async () => {
    const IDS = 1048576;
    const o = resolveArgv([`--config=${configFile(`maxPods: 20\nuserNamespaces:\n  idsPerPod: ${IDS}\n`)}`]);
    const etcDir = path.join(tmp, 'etc');
    fs.mkdirSync(etcDir, { recursive: true });
    fs.writeFileSync(path.join(etcDir, 'passwd'), 'kubelet:x:998:998::/home/kubelet:/usr/sbin/nologin\n');
    const line = `kubelet:${IDS}:${IDS * 20}\n`;
    fs.writeFileSync(path.join(etcDir, 'subuid'), line);
    fs.writeFileSync(path.join(etcDir, 'subgid'), line);
    const opts = { rootDir: path.join(tmp, 'root'), maxPods: o.maxPods, idsPerPod: o.userNamespacesIdsPerPod, logger };
    const userns = await nodeUserNamespaces({ ...opts, etcDir }).getOrCreate('pod-a');
    expect(userns.uidMappings[0]).toMatchObject({ containerId: 0, length: IDS });
    expect(userns.uidMappings[0]!.hostId % IDS).toBe(0);

    // The same subordinate range is too small for 21 pods of this size: refused as the kubelet would.
    const tooMany = nodeUserNamespaces({ ...opts, maxPods: 21, rootDir: path.join(tmp, 'root-2'), etcDir });
    await expect(tooMany.getOrCreate('pod-b')).rejects.toThrow(
      'kubelet user assigned IDs are not enough to support 21 pods',
    );
  });
});
