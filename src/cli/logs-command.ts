// `bootlet logs POD [CONTAINER] [-c CONTAINER] [-n NAMESPACE] [-f] [-p|--previous] [--timestamps]`:
// a static pod's container log, read straight from the CRI log files under podLogsDir, as
// `kubectl logs` shows it. It is the tool for the hours before the API server exists: it asks the
// running agent (its root-only socket) which pod is meant, and without an agent it finds the pod
// from the log directories alone.
import { fetchPods, DEFAULT_ROOT_DIR } from './pods-command.js';
import { chooseLogFile, findPodInLogDir, LogLookupError, pickAgentPod, type PodLogRef } from './pod-log-locator.js';
import { streamLog } from './log-stream.js';
import { resolve } from 'node:path';
import { errorMessage } from '../util/error-message.js';
import { usageError } from './usage-error.js';

const DEFAULT_POD_LOGS_DIR = '/var/log/pods';
/** The agent answers at once or is not there: a stuck socket must not delay the fallback much. */
const AGENT_TIMEOUT_MS = 3_000;

export const LOGS_USAGE = `Usage: bootlet logs POD [CONTAINER] [-c CONTAINER] [-n NAMESPACE] [-f] [-p] [--timestamps]
                    [--root-dir DIR] [--pod-logs-dir DIR]

Prints a static pod's container log from the CRI log files, like kubectl logs, without an API
server. POD is the pod's name (kube-apiserver-node1, or kube-apiserver when that is unique). The
pod is looked up through the running agent's socket (DIR/bootlet.sock, root only) or, when no
agent answers, in the log directories.
  -c, --container NAME   the container (needed when the pod has several)
  -n, --namespace NS     the pod's namespace, when the name is not unique
  -f, --follow           keep printing what is written, across rotations and restarts
  -p, --previous         the previous instance of the container (the one before the last restart)
      --timestamps       each line with the time the runtime recorded
      --root-dir DIR     the agent's --root-dir (default ${DEFAULT_ROOT_DIR})
      --pod-logs-dir DIR the agent's podLogsDir (default ${DEFAULT_POD_LOGS_DIR})`;

interface LogsArgs {
  pod: string;
  container?: string;
  namespace?: string;
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  rootDir: string;
  podLogsDir: string;
}

class LogsUsageError extends Error {}

const VALUE_FLAGS: Record<string, keyof LogsArgs> = {
  '-c': 'container',
  '--container': 'container',
  '-n': 'namespace',
  '--namespace': 'namespace',
  '--root-dir': 'rootDir',
  '--pod-logs-dir': 'podLogsDir',
};
const BOOL_FLAGS: Record<string, 'follow' | 'previous' | 'timestamps'> = {
  '-f': 'follow',
  '--follow': 'follow',
  '-p': 'previous',
  '--previous': 'previous',
  '--timestamps': 'timestamps',
};

function parseArgs(argv: readonly string[]): LogsArgs {
  const positional: string[] = [];
  const a: Omit<LogsArgs, 'pod'> = {
    follow: false,
    previous: false,
    timestamps: false,
    rootDir: DEFAULT_ROOT_DIR,
    podLogsDir: DEFAULT_POD_LOGS_DIR,
  };
  const set = a as Record<string, unknown>;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    if (BOOL_FLAGS[name]) {
      set[BOOL_FLAGS[name]] = eq > 0 ? arg.slice(eq + 1) !== 'false' : true;
    } else if (VALUE_FLAGS[name]) {
      const value = arg.startsWith('--') && eq > 0 ? arg.slice(eq + 1) : argv[++i];
      if (value === undefined || value === '') throw new LogsUsageError(`${name} needs a value`);
      set[VALUE_FLAGS[name]] = name.endsWith('dir') ? resolve(value) : value;
    } else if (arg.startsWith('-')) throw new LogsUsageError(`unknown flag ${JSON.stringify(arg)}`);
    else positional.push(arg);
  }
  if (positional.length === 0) throw new LogsUsageError('a pod name is needed');
  if (positional.length > 2) throw new LogsUsageError(`unexpected argument ${JSON.stringify(positional[2])}`);
  if (positional[1] !== undefined) {
    if (a.container !== undefined && a.container !== positional[1])
      throw new LogsUsageError('the container is given twice');
    a.container = positional[1];
  }
  return { ...a, pod: positional[0]! };
}

/** The pod as the agent knows it, or undefined when no agent answers (then the log dir decides). */
async function fromAgent(args: LogsArgs): Promise<PodLogRef | undefined> {
  let pods;
  try {
    pods = (await fetchPods(args.rootDir, AGENT_TIMEOUT_MS)).items ?? [];
  } catch {
    return undefined;
  }
  return pickAgentPod(pods, args.pod, args.namespace);
}

export async function runLogsCommand(
  argv: string[],
  out: (s: string) => void,
  err: (s: string) => void,
  signal?: AbortSignal,
): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    out(LOGS_USAGE + '\n');
    return 0;
  }
  let args: LogsArgs;
  try {
    args = parseArgs(argv);
  } catch (e) {
    return usageError('logs', errorMessage(e), err, LOGS_USAGE);
  }
  try {
    const pod = (await fromAgent(args)) ?? (await findPodInLogDir(args.podLogsDir, args.pod, args.namespace));
    if (!pod)
      throw new LogLookupError(
        `pod "${args.pod}" not found: no agent knows it and ${args.podLogsDir} has no logs of it`,
      );
    const choice = await chooseLogFile(args.podLogsDir, pod, args.container, args.previous);
    let stop = signal;
    if (args.follow && !signal) {
      const ac = new AbortController();
      process.once('SIGINT', () => ac.abort());
      process.once('SIGTERM', () => ac.abort());
      stop = ac.signal;
    }
    await streamLog({
      file: choice.file,
      restart: choice.restart,
      follow: args.follow,
      timestamps: args.timestamps,
      write: out,
      notice: err,
      signal: stop,
    });
    return 0;
  } catch (e) {
    if (
      e instanceof LogLookupError ||
      (e as NodeJS.ErrnoException).code !== undefined ||
      (e as Error).name === 'UnsafePathComponentError'
    ) {
      err(`bootlet logs: ${errorMessage(e)}\n`);
      return 1;
    }
    throw e;
  }
}
