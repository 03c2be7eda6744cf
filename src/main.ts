// Entry point of the executable. `--version` is answered before the rest of bootlet is loaded,
// so tooling that probes the binary gets an answer fast.
import './process/v8-flags.js';
import { bootletVersionLine, kubeletVersionLine } from './version.js';
import { errorMessage } from './util/error-message.js';

const argv = process.argv.slice(2);

/** A reader that goes away (`bootlet logs ... | head`) ends a command quietly, as it ends a Unix tool. */
function endQuietlyWhenStdoutCloses(): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => process.exit(err.code === 'EPIPE' ? 0 : 1));
}
if (argv.length === 1 && (argv[0] === 'version' || argv[0] === '--version')) {
  endQuietlyWhenStdoutCloses();
  // `--version` answers as the kubelet does: kubeadm's preflight runs `kubelet --version`.
  process.stdout.write(`${argv[0] === 'version' ? bootletVersionLine() : kubeletVersionLine()}\n`);
} else if (argv[0] === 'validate' || argv[0] === 'logs') {
  // Tools for the operator; they never start the agent.
  endQuietlyWhenStdoutCloses();
  const command =
    argv[0] === 'validate'
      ? import('./cli/validate-command.js').then((m) => m.runValidateCommand)
      : import('./cli/logs-command.js').then((m) => m.runLogsCommand);
  command
    .then(async (run) => {
      const code = await run(
        argv.slice(1),
        (s: string) => process.stdout.write(s),
        (s: string) => process.stderr.write(s),
      );
      // Exit once stdout has been written out (a pipe to a CI log may take a moment).
      process.stdout.write('', () => process.exit(code));
    })
    .catch((err: unknown) => {
      process.stderr.write(`bootlet: ${errorMessage(err)}\n`);
      process.exit(1);
    });
} else if (argv[0] === 'pods') {
  // A client of the running agent: it needs none of the agent's own machinery.
  endQuietlyWhenStdoutCloses();
  import('./cli/pods-command.js')
    .then(async (m) =>
      process.exit(
        await m.runPodsCommand(
          argv.slice(1),
          (s) => process.stdout.write(s),
          (s) => process.stderr.write(s),
        ),
      ),
    )
    .catch((err: unknown) => {
      process.stderr.write(`bootlet: ${errorMessage(err)}\n`);
      process.exit(1);
    });
} else {
  import('./cli/run.js')
    .then((m) => m.main(argv))
    .catch((err: unknown) => {
      process.stderr.write(`bootlet: ${errorMessage(err)}\n`);
      process.exit(1);
    });
}
