import { describe, expect, it } from 'vitest';
import { parseRuntimeEndpoint } from '../../../src/cri/endpoint.js';

describe('parseRuntimeEndpoint', () => {
  it('accepts unix:///path and /path', () => {
    expect(parseRuntimeEndpoint('unix:///run/containerd/containerd.sock')).toEqual({
      endpoint: 'unix:///run/containerd/containerd.sock',
      socketPath: '/run/containerd/containerd.sock',
      address: 'unix:///run/containerd/containerd.sock',
    });
    expect(parseRuntimeEndpoint('/run/crio/crio.sock')).toMatchObject({
      socketPath: '/run/crio/crio.sock',
      address: 'unix:///run/crio/crio.sock',
    });
  });

  it('refuses other schemes and relative paths', () => {
    expect(parseRuntimeEndpoint('tcp://127.0.0.1:1234')).toEqual({
      error: 'unsupported scheme (only unix:// sockets are supported)',
    });
    expect(parseRuntimeEndpoint('unix://relative.sock')).toEqual({
      error: 'socket path must be absolute (unix:///path)',
    });
    expect(parseRuntimeEndpoint('containerd.sock')).toHaveProperty('error');
  });
});
