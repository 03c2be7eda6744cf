// A container's resources (and the pod's overhead) as the API server checks them
// (validateResourceRequirements): names it knows for containers, quantities not negative (whole
// for extended resources), a request no larger than its limit, hugepages and extended resources
// with a limit equal to the request. Quantities are shown as Go prints them (Quantity.String()).
// A negative request would otherwise reach admission's sums and the cgroups.
import type { ResourceRequirements } from 'kubernetes-types/core/v1';
import { key, type PathPart } from '../field-path';
import { parseQuantity, type Quantity } from '../../k8s/quantity.js';
import { isQualifiedName } from './api-formats';
import { forbidden, invalid, required, stringer } from './field-errors';

type ResourceList = Readonly<Record<string, string | number>>;

const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);
// standardResources and integerResources of the API's helpers: the quota names counted in whole units are standard too.
const INTEGER_RESOURCES = new Set([
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'services.nodeports',
  'services.loadbalancers',
]);
const STANDARD_RESOURCES = new Set([
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'storage',
  'requests.storage',
  ...INTEGER_RESOURCES,
]);

const isHugePages = (name: string): boolean => name.startsWith('hugepages-');
/** In the kubernetes.io/ namespace (an unprefixed name is). */
const isNative = (name: string): boolean => !name.includes('/') || name.includes('kubernetes.io/');
const isExtended = (name: string): boolean =>
  !isNative(name) && !name.startsWith('requests.') && isQualifiedName(`requests.${name}`).length === 0;
const overcommitAllowed = (name: string): boolean => isNative(name) && !isHugePages(name);
const isCPUOrMemory = (name: string): boolean => name === 'cpu' || name === 'memory';

/** validateContainerResourceName (a resource name is printed unquoted: it has a String method). */
function resourceName(name: string, p: readonly PathPart[], out: string[]): void {
  const shown = stringer(name);
  const qualified = isQualifiedName(name);
  if (qualified.length > 0) out.push(...qualified.map((m) => invalid(p, shown, m)));
  else if (
    !name.includes('/') &&
    !STANDARD_RESOURCES.has(name) &&
    !name.startsWith('requests.hugepages-') &&
    !isHugePages(name)
  ) {
    out.push(invalid(p, shown, 'must be a standard resource type or fully qualified'));
  }
  if (!name.includes('/')) {
    if (!STANDARD_CONTAINER_RESOURCES.has(name) && !isHugePages(name))
      out.push(invalid(p, shown, 'must be a standard resource for containers'));
  } else if (!isNative(name) && !isExtended(name))
    out.push(invalid(p, shown, "doesn't follow extended resource name standard"));
}

/** ValidateResourceQuantityValue. */
function quantityValue(name: string, q: Quantity, p: readonly PathPart[], out: string[]): void {
  if (q.cmp(parseQuantity(0)) < 0) out.push(invalid(p, q.canonical(), 'must be greater than or equal to 0'));
  if ((INTEGER_RESOURCES.has(name) || isExtended(name)) && q.milliValue() % 1000 !== 0)
    out.push(invalid(p, stringer(q.canonical()), 'must be an integer'));
}

/**
 * A hugepages quantity is a whole number of its pages (AllowIndivisibleHugePagesValues is only for a
 * pod that already had one).
 */
function hugePagesValue(name: string, q: Quantity, p: readonly PathPart[], out: string[]): void {
  let divisible = false;
  try {
    const page = parseQuantity(name.slice('hugepages-'.length));
    divisible = page.cmp(parseQuantity(0)) > 0 && page.milliValue() % 1000 === 0 && q.value() % page.value() === 0;
  } catch {
    divisible = false;
  }
  if (!divisible) out.push(invalid(p, q.canonical(), `${q.canonical()} is not positive integer multiple of ${name}`));
}

function entries(list: ResourceList | undefined): [string, Quantity][] {
  return Object.entries(list ?? {}).map(([n, v]) => [n, parseQuantity(v)]);
}

export function validateResources(
  r: Pick<ResourceRequirements, 'limits' | 'requests'> | undefined,
  p: readonly PathPart[],
  out: string[],
): void {
  const limPath = [...p, 'limits'];
  const reqPath = [...p, 'requests'];
  const limits = new Map(entries(r?.limits));
  let cpuOrMemory = false;
  let hugePages = false;
  for (const [name, q] of limits) {
    resourceName(name, [...limPath, key(name)], out);
    quantityValue(name, q, [...limPath, key(name)], out);
    if (isHugePages(name)) hugePagesValue(name, q, [...limPath, key(name)], out);
    hugePages ||= isHugePages(name);
    cpuOrMemory ||= isCPUOrMemory(name);
  }
  for (const [name, q] of entries(r?.requests)) {
    resourceName(name, [...reqPath, key(name)], out);
    quantityValue(name, q, [...reqPath, key(name)], out);
    const limit = limits.get(name);
    if (limit) {
      // Not overcommitable (hugepages, extended resources): the request must be the limit.
      if (!overcommitAllowed(name) && q.cmp(limit) !== 0)
        out.push(invalid(reqPath, q.canonical(), `must be equal to ${name} limit of ${limit.canonical()}`));
      else if (q.cmp(limit) > 0)
        out.push(
          invalid(reqPath, q.canonical(), `must be less than or equal to ${name} limit of ${limit.canonical()}`),
        );
    } else if (!overcommitAllowed(name))
      out.push(required(limPath, 'Limit must be set for non overcommitable resources'));
    if (isHugePages(name)) hugePagesValue(name, q, [...reqPath, key(name)], out);
    hugePages ||= isHugePages(name);
    cpuOrMemory ||= isCPUOrMemory(name);
  }
  if (hugePages && !cpuOrMemory) out.push(forbidden(p, 'HugePages require cpu or memory'));
}
