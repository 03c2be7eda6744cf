// `npm run up` starts quiet: the node it runs is set up as an operator sets up a standalone node, so
// the agent has nothing to warn about; the warning a real config with no API server earns stays.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { upBootletArgs, upKubeletConfig } from '../../../dev/up-config.js';
import type { RuntimeService } from '../../../src/cri/cri-types.js';
import { createLogger } from '../../../src/log/logger.js';
import { startKubeletApi } from '../../../src/server/kubelet/start-kubelet-api.js';
import type { ServerSource } from '../../../src/server/source.js';
import { useTmpDir } from '../../support/tmp.js';
import { resolveArgv } from '../cli/resolve-argv.js';
import type { BootletOptions } from '../../../src/cli/options.js';

const resolve = resolveArgv;

/** The W and E lines of the kubelet API's start, as the agent (no API server) makes it. */
async function kubeletApiWarnings(o: BootletOptions): Promise<string[]> {
  const lines: string[] = [];
  const logger = createLogger({ format: 'text', verbosity: 0, sink: { write: (l) => lines.push(l) } });
  const server = startKubeletApi(o, {
    source: {} as ServerSource,
    metrics: () => '',
    runtime: {} as RuntimeService,
    checks: [],
    api: undefined,
    configz: () => ({}),
    logger,
  });
  await server?.close();
  return lines.filter((l) => /^[WE]\d{4} /.test(l));
}

describe("npm run up's node", () => {
  const dir = useTmpDir('up-config');

  it('is read by the agent with no start-up note and no kubelet API warning', async () => {
    const config = join(dir, 'kubelet-config.yaml');
    writeFileSync(config, upKubeletConfig(join(dir, 'pods-logs')));
    mkdirSync(join(dir, 'manifests'), { recursive: true });
    const o = resolve(
      upBootletArgs({
        config,
        manifests: join(dir, 'manifests'),
        endpoint: 'unix:///run/containerd/containerd.sock',
        rootDir: join(dir, 'root'),
        hostname: 'node1',
      }),
    );
    expect(o.podLogsDir).toBe(join(dir, 'pods-logs'));
    expect(o.notes).toMatchObject({
      notImplemented: [],
      unknownFields: [],
      duplicateFields: [],
      deprecations: [],
      skipped: [],
    });
    expect(o.kubeconfig).toBeUndefined();
    // Were it on, it must not take this machine's :10250 in a unit test.
    expect(await kubeletApiWarnings({ ...o, address: '127.0.0.1', port: 0, certDir: join(dir, 'pki') })).toEqual([]);
  });

  it("the kubelet's defaults with no API server still warn that the kubelet API refuses every request", async () => {
    const o = {
      ...resolve(['--hostname-override', 'node1']),
      address: '127.0.0.1',
      port: 0,
      certDir: join(dir, 'pki'),
    };
    expect(o.authorizationMode).toBe('Webhook');
    const warnings = await kubeletApiWarnings(o);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(
      'authorization.mode is Webhook but there is no API server (no --kubeconfig): every kubelet API request is refused',
    );
  });
});
