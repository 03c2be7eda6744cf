// Entry point of the executable. `--version` is answered before the rest of bootlet is loaded,
// so tooling that probes the binary gets an answer fast.
import { BOOTLET_VERSION } from './version.js';

const argv = process.argv.slice(2);
if (argv[0] === 'version' || argv[0] === '--version') {
  process.stdout.write(`bootlet v${BOOTLET_VERSION}\n`);
} else {
  import('./cli/run.js')
    .then((m) => m.main(argv))
    .catch((err: unknown) => {
      process.stderr.write(`bootlet: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    });
}
