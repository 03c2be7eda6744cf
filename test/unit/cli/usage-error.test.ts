// One exit-code rule for a command line a subcommand cannot use: 1, as the kubelet's cli.Run.
import { describe, expect, it } from 'vitest';
import { runLogsCommand, LOGS_USAGE } from '../../../src/cli/logs-command.js';
import { runPodsCommand, PODS_USAGE } from '../../../src/cli/pods-command.js';
import { runValidateCommand, VALIDATE_USAGE } from '../../../src/cli/validate-command.js';
import { USAGE_EXIT_CODE } from '../../../src/cli/usage-error.js';

type Command = (argv: string[], out: (s: string) => void, err: (s: string) => void) => Promise<number>;

const COMMANDS: [string, Command, string][] = [
  ['pods', runPodsCommand, PODS_USAGE],
  ['logs', runLogsCommand, LOGS_USAGE],
  ['validate', runValidateCommand, VALIDATE_USAGE],
];

describe('usage errors of the subcommands', () => {
  it('is the kubelet code', () => {
    expect(USAGE_EXIT_CODE).toBe(1);
  });

  it.each(COMMANDS)(
    'bootlet %s: an unknown flag exits 1 with one line and the usage, nothing on stdout',
    async (name, run, usage) => {
      let out = '';
      let err = '';
      const code = await run(
        ['--frobnicate'],
        (s) => (out += s),
        (s) => (err += s),
      );
      expect(code).toBe(1);
      expect(out).toBe('');
      expect(err.startsWith(`bootlet ${name}: `)).toBe(true);
      expect(err).toContain('frobnicate');
      expect(err.endsWith(`${usage}\n`)).toBe(true);
    },
  );
});
