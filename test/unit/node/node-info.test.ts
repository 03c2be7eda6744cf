import { describe, expect, it } from 'vitest';
import { collectNodeInfo, goArch, osImage } from '../../../src/node/node-info.js';

describe('collectNodeInfo', () => {
  it('reads the machine: OS image, GOARCH names, capacity and allocatable', () => {
    const info = collectNodeInfo({
      nodeName: 'n1',
      nodeIP: '10.0.0.7',
      runtimeVersion: 'containerd://1.6.20',
      kubeletVersion: 'v0.1.0',
      runtimeReady: () => true,
    });
    expect(info.operatingSystem).toBe('linux');
    expect(info.kernelVersion).not.toBe('');
    expect(Object.keys(info.capacity()).sort()).toEqual(['cpu', 'ephemeral-storage', 'memory', 'pods']);
    expect(info.capacity().pods).toBe('110');
    expect(info.capacity().memory).toMatch(/^\d+Ki$/);
    expect(Number(info.allocatable().memory.replace('Ki', ''))).toBeLessThan(
      Number(info.capacity().memory.replace('Ki', '')),
    );
    expect(info.pressure()).toEqual({
      memory: expect.any(Boolean),
      disk: expect.any(Boolean),
      pid: expect.any(Boolean),
    });
  });

  it('names architectures and OS images as the kubelet shows them', () => {
    expect(goArch('x64')).toBe('amd64');
    expect(goArch('arm64')).toBe('arm64');
    expect(osImage('NAME="Debian GNU/Linux"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n')).toBe(
      'Debian GNU/Linux 12 (bookworm)',
    );
    expect(osImage('')).toBe('Linux');
  });
});
