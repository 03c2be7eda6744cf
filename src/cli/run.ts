// The command line: parse, resolve options, start the agent, and stop it on SIGTERM/SIGINT with
// the pods left running. Every start-up problem is one clear line and exit code 1.
import { platform } from 'node:os';
import { KubeconfigError } from '../apiserver/client/kubeconfig.js';
import { goArch } from '../node/node-info.js';
import { createLogger } from '../log/logger.js';
import { guardProcess } from '../process/unexpected-errors.js';
import { stderrIsJournal } from '../systemd/journal.js';
import { RuntimeConnectError } from '../cri/cri-client.js';
import {
  BOOTLET_VERSION,
  bootletVersionLine,
  kubeletVersion,
  kubeletVersionLine,
  NODE_EXEC_ARGV,
  NODE_VERSION,
} from '../version.js';
import { startAgent } from './agent.js';
import { parseCommandLine, UsageError, type Command } from './argv.js';
import { CGROUP_V1_WARNING, CgroupV1Error, checkCgroupV1 } from './fail-cgroup-v1.js';
import { checkSwap, SwapOnError } from './fail-swap-on.js';
import { ConfigFileError } from './kubelet-config.js';
import type { BootletOptions } from './options.js';
import { resolveOptions } from './resolve-options.js';
import { logStartupNotes } from './startup-notes.js';
import { usage } from './usage.js';

function fail(message: string): never {
  process.stderr.write(`bootlet: ${message}\n`);
  process.exit(1);
}

const ONE_LINE_ERRORS = [UsageError, ConfigFileError, RuntimeConnectError, KubeconfigError, SwapOnError, CgroupV1Error];

function isOneLine(err: unknown): err is Error {
  return ONE_LINE_ERRORS.some((E) => err instanceof E);
}

/** The answer to a command that does not start the agent, or undefined. */
export function commandOutput(cmd: Command): string | undefined {
  if (cmd.kind === 'help') return usage();
  if (cmd.kind !== 'version') return undefined;
  if (cmd.format === 'bootlet') return bootletVersionLine();
  if (cmd.format === 'raw')
    return JSON.stringify(
      {
        gitVersion: kubeletVersion(),
        bootletVersion: BOOTLET_VERSION,
        nodeVersion: NODE_VERSION,
        nodeExecArgv: NODE_EXEC_ARGV,
        platform: `${platform()}/${goArch()}`,
      },
      null,
      2,
    );
  return kubeletVersionLine();
}

export async function main(argv: string[]): Promise<void> {
  let opts: BootletOptions;
  let cgroupV1: boolean;
  try {
    const cmd = parseCommandLine(argv);
    const output = commandOutput(cmd);
    if (output !== undefined || cmd.kind !== 'run') {
      // --help into a pager that quits early: a closed pipe ends the command quietly.
      process.stdout.on('error', () => process.exit(0));
      process.stdout.write(`${output ?? ''}\n`);
      return;
    }
    opts = resolveOptions(cmd.flags, cmd.deprecations);
    checkSwap(opts.failSwapOn);
    cgroupV1 = checkCgroupV1(opts.failCgroupV1);
  } catch (err) {
    if (isOneLine(err)) fail(err.message);
    throw err;
  }
  const logger = createLogger({
    format: opts.loggingFormat === 'json' ? 'json' : 'text',
    verbosity: opts.verbosity,
    journal: stderrIsJournal(),
  });
  guardProcess(logger);
  logStartupNotes(opts.notes, logger, opts.configFile);
  if (cgroupV1) logger.warn(CGROUP_V1_WARNING);
  try {
    const agent = await startAgent(opts, logger);
    const shutdown = (signal: string): void => {
      logger.info('Shutting down, leaving pods running', { signal });
      void agent.shutdown().finally(() => process.exit(0));
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
  } catch (err) {
    if (isOneLine(err)) fail(err.message);
    throw err;
  }
}
