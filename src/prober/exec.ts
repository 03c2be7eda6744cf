// exec probe: CRI ExecSync in the container with the probe's timeout; exit code 0 is success.
import type { Container } from 'kubernetes-types/core/v1';
import { CriError, type RuntimeService } from '../cri/cri-types.js';
import { expandVars } from '../kuberuntime/expansion.js';
import type { ProbeOutcome } from './types.js';
import { errorMessage } from '../util/error-message.js';

/** As the kubelet: the combined output kept for the event message is capped at 10 KiB. */
export const MAX_EXEC_OUTPUT_BYTES = 10 * 1024;

const DEADLINE_EXCEEDED = 4;

/**
 * The command with `$(VAR)` replaced by the container's literal env values only: the kubelet expands
 * probe commands without the downward API or secrets (ExpandContainerCommandOnlyStatic).
 */
export function expandProbeCommand(command: string[], container: Container): string[] {
  const env = new Map<string, string>();
  for (const e of container.env ?? []) if (e.value !== undefined && !e.valueFrom) env.set(e.name, e.value);
  return command.map((arg) => expandVars(arg, (name) => env.get(name)));
}

function combinedOutput(stdout: Buffer, stderr: Buffer): string {
  const all = Buffer.concat([stdout, stderr]);
  return all.subarray(0, MAX_EXEC_OUTPUT_BYTES).toString('utf8');
}

export async function runExecProbe(
  runtime: Pick<RuntimeService, 'execSync'>,
  containerId: string,
  command: string[],
  timeoutSeconds: number,
): Promise<ProbeOutcome> {
  if (command.length === 0) return { result: 'unknown', output: 'exec probe has no command' };
  try {
    const r = await runtime.execSync(containerId, command, timeoutSeconds);
    return { result: r.exitCode === 0 ? 'success' : 'failure', output: combinedOutput(r.stdout, r.stderr) };
  } catch (err) {
    // A timeout is the command's fault and counts as a failure (the kubelet's ExecProbeTimeout,
    // on by default since 1.20); any other runtime error says nothing about the container.
    if (
      err instanceof CriError &&
      (err.code === DEADLINE_EXCEEDED || /timeout .*exceeded|deadline exceeded/i.test(err.details))
    ) {
      return {
        result: 'failure',
        output: `command ${JSON.stringify(command.join(' '))} timed out after ${timeoutSeconds}s`,
      };
    }
    return { result: 'unknown', output: errorMessage(err) };
  }
}
