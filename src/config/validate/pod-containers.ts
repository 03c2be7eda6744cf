// Every container of a pod with its field path, in the order the API server visits them
// (podshelper.VisitContainersWithPath: init, regular, ephemeral): the rules that look at all
// containers alike name them in that order.
import type { Container, PodSpec } from 'kubernetes-types/core/v1';
import type { PathPart } from '../field-path';

export function containersWithPaths(spec: PodSpec): [Container, PathPart[]][] {
  return [
    ...(spec.initContainers ?? []).map((c, i): [Container, PathPart[]] => [c, ['spec', 'initContainers', i]]),
    ...(spec.containers ?? []).map((c, i): [Container, PathPart[]] => [c, ['spec', 'containers', i]]),
    ...(spec.ephemeralContainers ?? []).map((c, i): [Container, PathPart[]] => [
      c as Container,
      ['spec', 'ephemeralContainers', i],
    ]),
  ];
}
