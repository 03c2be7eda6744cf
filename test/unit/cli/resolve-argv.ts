// The agent's options as `bootlet` resolves them from a command line (and the config files it
// names), for the option tests; config files are written to a directory removed after the file.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { parseCommandLine } from '../../../src/cli/argv.js';
import type { BootletOptions } from '../../../src/cli/options.js';
import { resolveOptions } from '../../../src/cli/resolve-options.js';

export function resolveArgv(argv: string[]): BootletOptions {
  const cmd = parseCommandLine(argv);
  if (cmd.kind !== 'run') throw new Error(cmd.kind);
  return resolveOptions(cmd.flags, cmd.deprecations);
}

/**
 * A directory removed after the test file, and a writer of KubeletConfiguration files in it (`body`
 * after the kind) that returns each file's path.
 */
export function useConfigFiles(prefix: string): { dir: string; configFile: (body: string) => string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  const configFile = (body: string): string => {
    const f = join(dir, `c${n++}.yaml`);
    writeFileSync(f, 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n' + body);
    return f;
  };
  return { dir, configFile };
}
