// The event a failed probe makes, in the kubelet's words (`Unhealthy`, "Liveness probe failed: ...").
import type { ProbeResultEvent } from './types.js';

export interface ProbeEvent {
  readonly type: 'Warning';
  readonly reason: 'Unhealthy';
  readonly message: string;
}

/** The event for a result, or undefined when the result is not a new failure. */
export function unhealthyEvent(
  e: Pick<ProbeResultEvent, 'changed' | 'result' | 'probeType' | 'output'>,
): ProbeEvent | undefined {
  if (!e.changed || e.result !== 'failure') return undefined;
  const probe = e.probeType[0]!.toUpperCase() + e.probeType.slice(1);
  return { type: 'Warning', reason: 'Unhealthy', message: `${probe} probe failed: ${e.output}` };
}
