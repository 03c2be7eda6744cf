// Container resources and pod overhead as the API server checks them, in its words and with its
// quantities (Quantity.String()): a negative request must never reach admission or the cgroups.
import { describe, expect, it } from 'vitest';
import { pod } from '../helpers';
import { c, problems } from './problems';

const withResources = (resources: Record<string, unknown>) => pod({ containers: [c({ resources })] });
const R = 'spec.containers[0].resources';

describe('requests and limits', () => {
  it('refuses a request above its limit, with both quantities as Go prints them', () => {
    expect(problems(withResources({ requests: { cpu: 2 }, limits: { cpu: 1 } }))).toEqual([
      `${R}.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`,
    ]);
    expect(problems(withResources({ requests: { memory: '1.5Gi' }, limits: { memory: '1024Mi' } }))).toEqual([
      `${R}.requests: Invalid value: "1536Mi": must be less than or equal to memory limit of 1Gi`,
    ]);
    expect(
      problems(withResources({ requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } })),
    ).toEqual([]);
  });
  it('refuses negative quantities, in requests and limits', () => {
    expect(problems(withResources({ requests: { memory: '-1Gi' } }))).toEqual([
      `${R}.requests[memory]: Invalid value: "-1Gi": must be greater than or equal to 0`,
    ]);
    // A limit is also the defaulted request: both are named, as the API server would after defaulting.
    expect(problems(withResources({ limits: { cpu: '-500m' } }))).toEqual([
      `${R}.limits[cpu]: Invalid value: "-500m": must be greater than or equal to 0`,
      `${R}.requests[cpu]: Invalid value: "-500m": must be greater than or equal to 0`,
    ]);
  });
  it('names only resources a container may ask for, printed unquoted as the API server prints a resource name', () => {
    expect(problems(withResources({ requests: { memroy: '1Gi' } }))).toEqual([
      `${R}.requests[memroy]: Invalid value: memroy: must be a standard resource type or fully qualified`,
      `${R}.requests[memroy]: Invalid value: memroy: must be a standard resource for containers`,
    ]);
    expect(problems(withResources({ requests: { pods: '1' } }))).toEqual([
      `${R}.requests[pods]: Invalid value: pods: must be a standard resource for containers`,
    ]);
    expect(problems(withResources({ requests: { 'bad name/x': '1' } }))[0]).toMatch(
      /^spec\.containers\[0\]\.resources\.requests\[bad name\/x\]: Invalid value: bad name\/x: prefix part a lowercase RFC 1123 subdomain/,
    );
  });
  it('extended resources and hugepages: whole numbers, limit equal to request, hugepages beside cpu or memory', () => {
    expect(problems(withResources({ limits: { 'example.com/gpu': '500m' } }))).toEqual([
      `${R}.limits[example.com/gpu]: Invalid value: 500m: must be an integer`,
      `${R}.requests[example.com/gpu]: Invalid value: 500m: must be an integer`,
    ]);
    expect(problems(withResources({ requests: { 'example.com/gpu': '1' } }))).toEqual([
      `${R}.limits: Required value: Limit must be set for non overcommitable resources`,
    ]);
    expect(
      problems(withResources({ requests: { 'example.com/gpu': '1' }, limits: { 'example.com/gpu': '2' } })),
    ).toEqual([`${R}.requests: Invalid value: "1": must be equal to example.com/gpu limit of 2`]);
    expect(problems(withResources({ limits: { 'hugepages-2Mi': '4Mi' } }))).toEqual([
      `${R}: Forbidden: HugePages require cpu or memory`,
    ]);
    expect(problems(withResources({ limits: { 'hugepages-2Mi': '4Mi', memory: '1Gi' } }))).toEqual([]);
  });
  it('checks the pod overhead the same way', () => {
    expect(problems(pod({ overhead: { cpu: '-1' } }))).toEqual([
      'spec.overhead.limits[cpu]: Invalid value: "-1": must be greater than or equal to 0',
    ]);
  });
});
