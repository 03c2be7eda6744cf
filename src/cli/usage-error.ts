// The one exit-code rule for a command line a subcommand cannot use (an unknown flag, a bad value,
// a missing operand or a path that does not exist): exit 1, the kubelet's rule. Every component's
// main hands its cobra command to component-base's cli.Run, which prints the error and returns 1
// for any failure, a usage error included; kubectl does the same.
export const USAGE_EXIT_CODE = 1;

/** Writes `bootlet <command>: <why>` (and the usage, when given) to `err`; returns the exit code. */
export function usageError(command: string, why: string, err: (s: string) => void, usageText?: string): number {
  err(`bootlet ${command}: ${why}\n${usageText !== undefined ? `${usageText}\n` : ''}`);
  return USAGE_EXIT_CODE;
}
