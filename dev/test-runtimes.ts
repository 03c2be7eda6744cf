// `npm run test:runtimes [-- 1.7 2.1]`: the end-to-end files that depend most on the container
// runtime (pod lifecycle, API pods, the kubelet API and its streams, hardening, the PLEG's events,
// cgroups and the cgroup driver, probes, adoption, status read back) run once per containerd
// version, each with BOOTLET_TEST_CONTAINERD set, after one another. `npm test` runs everything on
// 1.6, the machine's. Prints the time each version took; exits non-zero when one failed.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { CONTAINERD_VERSIONS, CONTAINERD_VERSION_ENV, isContainerdVersion } from './containerd-versions.js';
import { REPO_ROOT } from './paths.js';

/** The selection; each file starts its own private containerd of the version under test. */
export const RUNTIME_MATRIX_FILES = [
  'test/e2e/agent/lifecycle.test.ts',
  'test/e2e/agent/api-pods.test.ts',
  'test/e2e/server/kubelet-api.test.ts',
  'test/e2e/agent/hardening.test.ts',
  'test/e2e/pleg/pleg.test.ts',
  'test/e2e/agent/cri-calls.test.ts',
  'test/e2e/agent/containers.test.ts',
  'test/e2e/agent/cgroups.test.ts',
  'test/e2e/cm/systemd-driver.test.ts',
  'test/e2e/prober/probes.test.ts',
  'test/e2e/cri/cri-client.test.ts',
  'test/e2e/agent/handoff.test.ts',
  'test/e2e/agent/ephemeral-containers.test.ts',
  'test/e2e/server/status.test.ts',
];

/** The versions `npm run test:runtimes` runs by default: all but the machine's, which `npm test` covers. */
const DEFAULT_VERSIONS = CONTAINERD_VERSIONS.filter((v) => v !== '1.6');

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  const asked = process.argv.slice(2);
  const bad = asked.filter((v) => !isContainerdVersion(v));
  if (bad.length > 0) {
    console.error(`test:runtimes: unknown containerd ${bad.join(', ')} (one of ${CONTAINERD_VERSIONS.join(', ')})`);
    process.exit(2);
  }
  const versions = asked.length > 0 ? asked : DEFAULT_VERSIONS;
  const results: { version: string; ok: boolean; seconds: number }[] = [];
  for (const version of versions) {
    console.log(`\n==== containerd ${version}: ${RUNTIME_MATRIX_FILES.length} files ====`);
    const started = Date.now();
    const run = spawnSync(path.join(REPO_ROOT, 'node_modules', '.bin', 'vitest'), ['run', ...RUNTIME_MATRIX_FILES], {
      cwd: REPO_ROOT,
      stdio: 'inherit',
      env: { ...process.env, [CONTAINERD_VERSION_ENV]: version },
    });
    results.push({ version, ok: run.status === 0, seconds: Math.round((Date.now() - started) / 1000) });
  }
  console.log('\ncontainerd | result | time');
  for (const r of results) console.log(`${r.version.padEnd(10)} | ${r.ok ? 'passed' : 'FAILED'} | ${r.seconds} s`);
  process.exit(results.every((r) => r.ok) ? 0 : 1);
}
