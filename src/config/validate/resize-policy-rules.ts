// A container's resizePolicy as the API server checks it (validateResizePolicy): each resource once,
// cpu or memory, with NotRequired or RestartContainer, and only NotRequired in a pod that never
// restarts. The API server names the list, not the entry, for all but a duplicate. Init containers
// may carry one since InPlacePodVerticalScaling is on (GA in 1.35), so no init rule here.
import type { Container } from 'kubernetes-types/core/v1';
import type { PathPart } from '../field-path';
import { duplicate, invalid, required, stringer, unsupported } from './field-errors';

const RESOURCES = ['cpu', 'memory'] as const;
const POLICIES = ['NotRequired', 'RestartContainer'] as const;

export function validateResizePolicy(
  c: Container,
  path: readonly PathPart[],
  podRestartPolicy: string | undefined,
  out: string[],
): void {
  const p = [...path, 'resizePolicy'];
  const seen = new Set<string>();
  (c.resizePolicy ?? []).forEach((rp, i) => {
    const name = rp.resourceName ?? '';
    const policy = rp.restartPolicy ?? '';
    // A resource name prints through its String method, unquoted.
    if (seen.has(name)) out.push(duplicate([...p, i], stringer(name)));
    seen.add(name);
    if (name === '') out.push(required(p));
    else if (!(RESOURCES as readonly string[]).includes(name)) out.push(unsupported(p, stringer(name), RESOURCES));
    if (policy === '') out.push(required(p));
    else if (!(POLICIES as readonly string[]).includes(policy)) out.push(unsupported(p, policy, POLICIES));
    if (podRestartPolicy === 'Never' && policy !== 'NotRequired')
      out.push(invalid(p, policy, "must be 'NotRequired' when `restartPolicy` is 'Never'"));
  });
}
