import { describe, expect, it } from 'vitest';
import { PodAdmission } from '../../../src/admission/pod-admission.js';
import type { PodUpdate, StaticPod } from '../../../src/config/types.js';
import { nullLogger } from '../../../src/log/logger.js';
import type { TerminationRequest } from '../../../src/podworkers/termination-request.js';
import type { NodeFacts } from '../../../src/admission/node-facts.js';
import { node, pod, staticPod } from './pods.js';

function setup(maxPods = 2, facts: Partial<NodeFacts> = {}) {
  const applied: string[] = [];
  const refused = new Map<string, string>();
  const terminal = new Set<string>();
  const logs: string[] = [];
  /** The victims being waited for: call one to say it has stopped. */
  const stops = new Map<string, () => void>();
  const kills = new Map<string, TerminationRequest>();
  const logger = { ...nullLogger, warn: (m: string) => void logs.push(m), with: () => logger };
  const a = new PodAdmission({
    node: () => node({ allocatable: { ...node().allocatable, pods: maxPods }, ...facts }),
    apply: (u: PodUpdate) => void applied.push(`${u.op} ${u.pod.uid}`),
    // A victim's stop reaches its worker as a removal would, with the preemption's termination request.
    stop: (p, request) => {
      applied.push(`REMOVE ${p.uid}`);
      kills.set(p.uid, request);
    },
    isTerminal: (uid) => terminal.has(uid),
    refused: (p, reason) => void refused.set(p.uid, reason),
    terminal: (p) => void refused.set(p.uid, `terminal ${p.pod.status?.phase ?? ''}`),
    forgotten: (uid) => void refused.delete(uid),
    stopped: (uid) => new Promise<void>((resolve) => stops.set(uid, resolve)),
    logger: logger as never,
  });
  return { a, applied, refused, terminal, logs, stops, kills };
}

/** An API pod (not critical) as the desired set has it. */
function apiPod(name: string, opts: Parameters<typeof pod>[1] & { phase?: string } = {}): StaticPod {
  const base = pod(name, opts) as StaticPod['pod'];
  base.metadata.annotations['kubernetes.io/config.source'] = 'api';
  const p: StaticPod['pod'] = opts.phase ? { ...base, status: { phase: opts.phase } } : base;
  return { pod: p, uid: p.metadata.uid, key: `default/${name}`, file: `api:${name}`, uidPinned: true };
}

/** The adoption policy's answer: the runtime held these UIDs at start. */
const found = (uids: string[]) => (uid: string) => uids.includes(uid);

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

const add = (pod: StaticPod): PodUpdate => ({ op: 'ADD', pod });

describe('PodAdmission', () => {
  it('admits nothing before the runtime is read, then running pods first and the rest by config.seen', () => {
    const { a, applied, refused } = setup(2);
    a.update(add(staticPod('late', { seen: '2026-01-01T00:00:03Z' })));
    a.update(add(staticPod('early', { seen: '2026-01-01T00:00:01Z' })));
    a.update(add(staticPod('running', { seen: '2026-01-01T00:00:09Z' })));
    expect(applied).toEqual([]);
    a.startAdmitting(found(['uid-running']));
    expect(applied).toEqual(['ADD uid-running', 'ADD uid-early']);
    expect([...refused]).toEqual([['uid-late', 'UnexpectedAdmissionError']]);
  });

  it('a pod found running is admitted even over maxPods: a restart never kills it', () => {
    const { a, applied } = setup(1);
    a.update(add(staticPod('x')));
    a.update(add(staticPod('y')));
    a.startAdmitting(found(['uid-x', 'uid-y']));
    expect(applied).toEqual(['ADD uid-x', 'ADD uid-y']);
  });

  it('an API pod the source refused (its spec fails validation) is reported Failed with that reason, even if it runs already', () => {
    const { a, applied, refused, logs } = setup(5);
    const bad: StaticPod = {
      ...staticPod('bad'),
      refusal: {
        reason: 'FailedValidation',
        message: 'spec.volumes[0].name: Invalid value: "A_B": a lowercase RFC 1123 label must consist of ...',
      },
    };
    a.update(add(bad));
    a.update(add(staticPod('good')));
    a.startAdmitting(found(['uid-bad']));
    expect(applied).toEqual(['ADD uid-good']);
    expect([...refused]).toEqual([['uid-bad', 'FailedValidation']]);
    expect(logs).toEqual(['Pod refused: it cannot run on this node']);
  });

  it('a refused pod never reaches the workers, is logged once, and is forgotten when removed', () => {
    const { a, applied, refused, logs } = setup(1);
    a.startAdmitting(found([]));
    const x = staticPod('x');
    const y = staticPod('y');
    a.update(add(x));
    a.update(add(y));
    a.update({ op: 'UPDATE', pod: y, previous: y });
    expect(applied).toEqual(['ADD uid-x']);
    expect(logs).toEqual(['Pod refused admission']);
    a.update({ op: 'REMOVE', pod: y });
    expect(refused.size).toBe(0);
    expect(applied).toEqual(['ADD uid-x']);
  });

  it('a removed or terminal pod frees its slot for the next new pod; a refused one is not retried', () => {
    const { a, applied, refused, terminal } = setup(1);
    a.startAdmitting(found([]));
    a.update(add(staticPod('x')));
    a.update(add(staticPod('y')));
    a.update({ op: 'REMOVE', pod: staticPod('x') });
    expect(applied).toEqual(['ADD uid-x', 'REMOVE uid-x']);
    expect(refused.has('uid-y')).toBe(true);
    a.update(add(staticPod('z')));
    terminal.add('uid-z');
    a.update(add(staticPod('w')));
    expect(applied).toEqual(['ADD uid-x', 'REMOVE uid-x', 'ADD uid-z', 'ADD uid-w']);
  });

  it('a changed pod (new UID) is measured without its predecessor and replaces it as one update', () => {
    const { a, applied } = setup(1);
    a.startAdmitting(found([]));
    const v1 = staticPod('x');
    a.update(add(v1));
    const v2: StaticPod = { ...v1, uid: 'uid-x2', pod: { ...v1.pod, metadata: { ...v1.pod.metadata, uid: 'uid-x2' } } };
    a.update({ op: 'UPDATE', pod: v2, previous: v1 });
    expect(applied).toEqual(['ADD uid-x', 'UPDATE uid-x2']);
  });
});

describe('PodAdmission and a kubelet handoff', () => {
  it('a pod re-identified under a kubelet UID while waiting reaches the workers as that change', () => {
    const { a, applied } = setup(5);
    const computed = staticPod('api');
    a.update(add(computed));
    const adopted: StaticPod = { ...computed, uid: 'kubelet-uid', computedUid: computed.uid };
    a.update({ op: 'UPDATE', pod: adopted, previous: computed });
    a.startAdmitting(found(['kubelet-uid']));
    expect(applied).toEqual(['UPDATE kubelet-uid']);
    expect(a.isAdmitted('kubelet-uid')).toBe(true);
  });
});

describe('PodAdmission and preemption', () => {
  it("a critical pod counts at once in its victim's place and reaches the workers only once the victim has stopped", async () => {
    const { a, applied, refused, stops, logs, kills } = setup(2);
    a.startAdmitting(found([]));
    a.update(add(staticPod('cp1')));
    a.update(add(apiPod('web')));
    a.update(add(staticPod('cp2')));
    expect(refused.get('uid-web')).toBe('Preempting');
    expect(applied).toEqual(['ADD uid-cp1', 'ADD uid-web', 'REMOVE uid-web']);
    expect(kills.get('uid-web')).toEqual({
      reason: 'preempted',
      status: {
        reason: 'Preempting',
        message: 'Preempted in order to admit critical pod',
        conditionMessage: 'Pod was preempted by Kubelet to accommodate a critical pod.',
        alwaysFailed: true,
      },
    });
    expect(logs).toContain('Preempting pod to free up resources');
    // Meanwhile the node is full: cp2 holds web's slot, and another pod is decided without waiting.
    a.update(add(apiPod('late')));
    expect(refused.get('uid-late')).toBe('OutOfpods');
    await turn();
    expect(applied).not.toContain('ADD uid-cp2');
    stops.get('uid-web')!();
    await turn();
    expect(applied).toEqual(['ADD uid-cp1', 'ADD uid-web', 'REMOVE uid-web', 'ADD uid-cp2']);
  });

  it('a held pod changed meanwhile starts as it is then; one removed meanwhile never reaches the workers', async () => {
    const { a, applied, stops } = setup(1);
    a.startAdmitting(found([]));
    a.update(add(apiPod('w1')));
    const cp = staticPod('cp');
    a.update(add(cp));
    const cp2: StaticPod = { ...cp, pod: { ...cp.pod } };
    a.update({ op: 'UPDATE', pod: cp2, previous: cp });
    expect(applied).toEqual(['ADD uid-w1', 'REMOVE uid-w1']);
    stops.get('uid-w1')!();
    await turn();
    expect(applied).toEqual(['ADD uid-w1', 'REMOVE uid-w1', 'ADD uid-cp']);
    expect(a.isAdmitted('uid-cp')).toBe(true);

    const other = setup(1);
    other.a.startAdmitting(found([]));
    other.a.update(add(apiPod('w2')));
    other.a.update(add(staticPod('gone')));
    other.a.update({ op: 'REMOVE', pod: staticPod('gone') });
    other.stops.get('uid-w2')!();
    await turn();
    expect(other.applied).toEqual(['ADD uid-w2', 'REMOVE uid-w2']);
  });
});

describe('PodAdmission and terminal API pods', () => {
  it('an API pod the server has Failed or Succeeded is never started, even found running after a restart', () => {
    const { a, applied, refused } = setup(5);
    a.update(add(apiPod('done', { phase: 'Succeeded' })));
    a.update(add(apiPod('failed', { phase: 'Failed' })));
    a.update(add(apiPod('running', { phase: 'Running' })));
    a.startAdmitting(found(['uid-failed', 'uid-running']));
    expect(applied).toEqual(['ADD uid-running']);
    expect([...refused]).toEqual([
      ['uid-done', 'terminal Succeeded'],
      ['uid-failed', 'terminal Failed'],
    ]);
  });
});
