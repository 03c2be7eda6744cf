import { describe, expect, it } from 'vitest';
import type { RuntimeCondition, RuntimeFeatures, RuntimeService, RuntimeStatus } from '../../../src/cri/cri-types.js';
import { createLogger } from '../../../src/log/logger.js';
import {
  formatRuntimeCondition,
  NETWORK_STATE_UNKNOWN,
  RuntimeHealth,
} from '../../../src/kuberuntime/runtime-health.js';

const runtimeReady: RuntimeCondition = { type: 'RuntimeReady', status: true, reason: '', message: '' };
const networkDown: RuntimeCondition = {
  type: 'NetworkReady',
  status: false,
  reason: 'NetworkPluginNotReady',
  message: 'Network plugin returns error: cni plugin not initialized',
};
const networkUp: RuntimeCondition = { type: 'NetworkReady', status: true, reason: '', message: '' };

function health(
  answers: (RuntimeStatus | Error)[],
  features?: RuntimeFeatures,
): { h: RuntimeHealth; logs: Record<string, unknown>[] } {
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({
    format: 'json',
    verbosity: 0,
    sink: { write: (l) => logs.push(JSON.parse(l) as Record<string, unknown>) },
  });
  const runtime = {
    statusWithHandlers: async () => {
      const next = answers.shift();
      if (!next || next instanceof Error) throw next ?? new Error('no more answers');
      return { status: next, runtimeHandlers: [], ...(features ? { features } : {}) };
    },
  } as Pick<RuntimeService, 'statusWithHandlers'> as RuntimeService;
  return { h: new RuntimeHealth(runtime, logger), logs };
}

describe('runtime health', () => {
  it('prints a runtime condition as the kubelet does', () => {
    expect(formatRuntimeCondition(networkDown)).toBe(
      'NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized',
    );
    expect(formatRuntimeCondition(undefined)).toBe('<nil>');
  });

  it('the network state is unknown until the runtime answered, then follows NetworkReady, with one log line per change', async () => {
    const { h, logs } = health([
      { conditions: [runtimeReady, networkDown] },
      { conditions: [runtimeReady, networkDown] },
      { conditions: [runtimeReady, networkUp] },
      { conditions: [runtimeReady] },
    ]);
    expect(h.networkNotReady()).toBe(NETWORK_STATE_UNKNOWN);
    await h.pollNow();
    expect(h.networkNotReady()).toBe(`container runtime network not ready: ${formatRuntimeCondition(networkDown)}`);
    await h.pollNow();
    await h.pollNow();
    expect(h.networkNotReady()).toBeUndefined();
    expect(h.ready()).toBe(true);
    // A runtime that says nothing of its network is not ready either (the kubelet's nil condition).
    await h.pollNow();
    expect(h.networkNotReady()).toBe('container runtime network not ready: <nil>');
    expect(logs.map((l) => l.msg)).toEqual([
      'Container runtime network not ready',
      'Container runtime network is ready',
      'Container runtime network not ready',
    ]);
  });

  it('a failed Status call makes the runtime not ready and leaves the network state as it was', async () => {
    const { h } = health([{ conditions: [runtimeReady, networkUp] }, new Error('connection refused')]);
    await h.pollNow();
    await h.pollNow();
    expect(h.ready()).toBe(false);
    expect(h.networkNotReady()).toBeUndefined();
  });

  it('keeps the runtime’s features from Status: SupplementalGroupsPolicy honoured only where it says so (KEP-3619)', async () => {
    const old = health([{ conditions: [runtimeReady, networkUp] }]).h;
    expect(old.supplementalGroupsPolicy()).toBe(false);
    await old.pollNow();
    // A runtime before containerd 2.0 says nothing: not honoured, and no status.features.
    expect(old.supplementalGroupsPolicy()).toBe(false);
    expect(old.nodeFeatures()).toBeUndefined();
    const current = health([{ conditions: [runtimeReady, networkUp] }], { supplementalGroupsPolicy: true }).h;
    await current.pollNow();
    expect(current.supplementalGroupsPolicy()).toBe(true);
    expect(current.nodeFeatures()).toEqual({ supplementalGroupsPolicy: true });
  });
});
