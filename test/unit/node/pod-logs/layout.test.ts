// The container log layout: the kubelet's names, and every part checked before it is a path.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  containerLogDirectory,
  containerLogFileName,
  containerLogLinkName,
  containerLogLinksDir,
  containerLogPath,
  isContainerLogLinkOf,
  isContainerLogPathOf,
  isRotatedLogOf,
  newerRestart,
  parsePodLogsDirName,
  podLogDirectory,
  podLogsDirName,
  restartCountOfLogFile,
  restartCountsWithLogs,
  rotatedLogPath,
} from '../../../../src/node/pod-logs/layout.js';
import { useTmpDir } from '../../../support/tmp.js';
import { refused } from '../refused.js';

const UID = '0123456789abcdef0123456789abcdef';
const LOGS = '/var/log/pods';
const pod = { metadata: { namespace: 'kube-system', name: 'etcd-node1', uid: UID } };
const tmp = useTmpDir('pod-logs-layout');

describe('container log layout', () => {
  it('names directories and files as the kubelet does', () => {
    expect(podLogsDirName('kube-system', 'etcd-node1', UID)).toBe(`kube-system_etcd-node1_${UID}`);
    expect(podLogDirectory(LOGS, pod)).toBe(`${LOGS}/kube-system_etcd-node1_${UID}`);
    expect(containerLogDirectory(LOGS, pod, 'etcd')).toBe(`${LOGS}/kube-system_etcd-node1_${UID}/etcd`);
    expect(containerLogFileName(3)).toBe('3.log');
    expect(containerLogPath('x', 0)).toBe('x/0.log');
    expect(containerLogLinksDir(LOGS)).toBe('/var/log/containers');
    expect(containerLogLinkName(pod, 'etcd', 'abc123')).toBe('etcd-node1_kube-system_etcd-abc123.log');
    expect(isContainerLogLinkOf('etcd-node1_kube-system_etcd-abc123.log', 'abc123')).toBe(true);
    expect(isContainerLogLinkOf('etcd-node1_kube-system_etcd-abc1234.log', 'abc123')).toBe(false);
  });

  it('refuses a namespace, pod name, uid, container name, restart count or container id that is not one', () => {
    refused(() => podLogsDirName('../x', 'etcd', UID), 'namespace');
    refused(() => podLogsDirName('default', 'a/../../b', UID), 'pod name');
    refused(() => podLogsDirName('default', 'etcd', '../x'), 'pod uid');
    refused(() => podLogDirectory(LOGS, { metadata: { namespace: 'default', name: 'etcd', uid: 'a_b' } }), 'pod uid');
    refused(() => containerLogDirectory(LOGS, pod, '..'), 'container name');
    refused(() => containerLogPath('a/b', 0), 'container name');
    refused(() => containerLogFileName(-1), 'restart count');
    refused(() => containerLogFileName(1.5), 'restart count');
    refused(() => containerLogLinkName(pod, 'etcd', '../x'), 'container id');
  });

  it('reads directory names back only when the layout could have made them', () => {
    expect(parsePodLogsDirName(`kube-system_etcd-node1_${UID}`)).toEqual({
      namespace: 'kube-system',
      name: 'etcd-node1',
      uid: UID,
    });
    for (const bad of [
      'kube-system_etcd',
      `a_b_c_${UID}`,
      `-x_etcd_${UID}`,
      `ns_Etcd_${UID}`,
      'ns_etcd_',
      'ns_etcd_..',
    ])
      expect(parsePodLogsDirName(bad), bad).toBeUndefined();
  });

  it('knows a live log file from a rotated one and anything else', () => {
    expect(restartCountOfLogFile('0.log')).toBe(0);
    expect(restartCountOfLogFile('12.log')).toBe(12);
    for (const other of [
      '0.log.20261129-170003.000',
      '0.log.20261129-170003.000.gz',
      'x.log',
      '.log',
      '1234567890.log',
      '0.log.tmp',
    ])
      expect(restartCountOfLogFile(other), other).toBeUndefined();
    const rotated = rotatedLogPath('/l/0.log', new Date(Date.UTC(2026, 10, 29, 17, 41, 15, 7)));
    expect(rotated).toBe('/l/0.log.20261129-174115.007');
    expect(isRotatedLogOf('0.log', path.basename(rotated))).toBe(true);
    expect(isRotatedLogOf('0.log', `${path.basename(rotated)}.gz`)).toBe(true);
    expect(isRotatedLogOf('0.log', `${path.basename(rotated)}.gz.tmp`)).toBe(false);
    expect(isRotatedLogOf('0.log', '10.log')).toBe(false);
  });

  it('accepts a runtime log path only in the container directory it belongs to', () => {
    const dir = containerLogDirectory(LOGS, pod, 'etcd');
    expect(isContainerLogPathOf(`${dir}/2.log`, LOGS, pod, 'etcd')).toBe(true);
    expect(isContainerLogPathOf(`${dir}/../etcd/2.log`, LOGS, pod, 'etcd')).toBe(false);
    expect(isContainerLogPathOf(`${dir}/2.log.20261129-174115.007`, LOGS, pod, 'etcd')).toBe(false);
    expect(isContainerLogPathOf(`${containerLogDirectory(LOGS, pod, 'other')}/2.log`, LOGS, pod, 'etcd')).toBe(false);
    expect(isContainerLogPathOf('/etc/shadow', LOGS, pod, 'etcd')).toBe(false);
    // A name that is not valid never matches, whatever the runtime says.
    expect(
      isContainerLogPathOf(
        `${LOGS}/kube-system__${UID}/etcd/0.log`,
        LOGS,
        { metadata: { namespace: 'kube-system', name: '', uid: UID } },
        'etcd',
      ),
    ).toBe(false);
  });

  it('lists the restart counts that have a log file, highest first', async () => {
    const dir = path.join(tmp, 'etcd');
    expect(await restartCountsWithLogs(dir)).toEqual([]);
    fs.mkdirSync(dir);
    for (const f of ['0.log', '2.log', '10.log', '2.log.20261129-174115.007', 'notes.txt'])
      fs.writeFileSync(path.join(dir, f), '');
    expect(await restartCountsWithLogs(dir)).toEqual([10, 2, 0]);
    expect(await newerRestart(dir, 2)).toBe(10);
    expect(await newerRestart(dir, 10)).toBeUndefined();
  });
});
