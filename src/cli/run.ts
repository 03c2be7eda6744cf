// The command line: parse, resolve options, start the agent, and stop it on SIGTERM/SIGINT with
// the pods left running. Every start-up problem is one clear line and exit code 1.
import { KubeconfigError } from '../apiserver/index.js';
import { createLogger } from '../log/logger.js';
import { guardProcess } from '../log/unexpected-errors.js';
import { RuntimeConnectError } from '../runtime/cri-client.js';
import { BOOTLET_VERSION } from '../version.js';
import { startAgent } from './agent.js';
import { parseCommandLine, usage, UsageError } from './flags.js';
import { ConfigFileError } from './kubelet-config.js';
import { resolveOptions, type BootletOptions } from './options.js';

function fail(message: string): never {
  process.stderr.write(`bootlet: ${message}\n`);
  process.exit(1);
}

const ONE_LINE_ERRORS = [UsageError, ConfigFileError, RuntimeConnectError, KubeconfigError];

function isOneLine(err: unknown): err is Error {
  return ONE_LINE_ERRORS.some((E) => err instanceof E);
}

export async function main(argv: string[]): Promise<void> {
  let opts: BootletOptions;
  try {
    const cmd = parseCommandLine(argv);
    if (cmd.kind === 'help') {
      process.stdout.write(usage() + '\n');
      return;
    }
    if (cmd.kind === 'version') {
      process.stdout.write(`bootlet v${BOOTLET_VERSION}\n`);
      return;
    }
    opts = resolveOptions(cmd.flags);
  } catch (err) {
    if (isOneLine(err)) fail(err.message);
    throw err;
  }
  const logger = createLogger({ format: opts.loggingFormat, verbosity: opts.verbosity });
  guardProcess(logger);
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
