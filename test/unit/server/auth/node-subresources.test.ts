// The kubelet's own tables (pkg/kubelet/server/auth_test.go: TestIsSubPath, and AuthzTestCases with
// fine-grained authorization on, as KubeletFineGrainedAuthz is locked in 1.36).
import { describe, expect, it } from 'vitest';
import { isSubpath, nodeSubresources } from '../../../../src/server/auth/node-subresources.js';
import { requestAttributes } from '../../../../src/server/auth/request-attributes.js';

describe('isSubpath (TestIsSubPath)', () => {
  const cases: [string, string, string, boolean][] = [
    ['empty', '', '', true],
    ['match 1', 'foo', 'foo', true],
    ['match 2', '/foo', '/foo', true],
    ['match 3', '/foo/', '/foo/', true],
    ['match 4', '/foo/bar', '/foo/bar', true],
    ['subpath of root 1', '/foo', '/', true],
    ['subpath of root 2', '/foo/', '/', true],
    ['subpath of root 3', '/foo/bar', '/', true],
    ['subpath of path 1', '/foo', '/foo', true],
    ['subpath of path 2', '/foo/', '/foo', true],
    ['subpath of path 3', '/foo/bar', '/foo', true],
    ['mismatch 1', '/foo', '/bar', false],
    ['mismatch 2', '/foo', '/foobar', false],
    ['mismatch 3', '/foobar', '/foo', false],
  ];
  it.each(cases)('%s', (_name, subpath, path, expected) => {
    expect(isSubpath(subpath, path)).toBe(expected);
  });
});

describe('the subresources asked for each path (AuthzTestCases, fine-grained)', () => {
  const table: Record<string, string[]> = {
    '/attach/{podNamespace}/{podID}/{containerName}': ['proxy'],
    '/attach/{podNamespace}/{podID}/{uid}/{containerName}': ['proxy'],
    '/checkpoint/{podNamespace}/{podID}/{containerName}': ['checkpoint'],
    '/configz': ['configz', 'proxy'],
    '/statusz': ['statusz', 'proxy'],
    '/containerLogs/{podNamespace}/{podID}/{containerName}': ['proxy'],
    '/debug/flags/v': ['proxy'],
    '/debug/pprof/{subpath:*}': ['proxy'],
    '/exec/{podNamespace}/{podID}/{containerName}': ['proxy'],
    '/exec/{podNamespace}/{podID}/{uid}/{containerName}': ['proxy'],
    '/healthz': ['healthz', 'proxy'],
    '/healthz/log': ['healthz', 'proxy'],
    '/healthz/ping': ['healthz', 'proxy'],
    '/healthz/syncloop': ['healthz', 'proxy'],
    '/logs/': ['log'],
    '/logs/{logpath:*}': ['log'],
    '/metrics': ['metrics'],
    '/metrics/slis': ['metrics'],
    '/metrics/cadvisor': ['metrics'],
    '/metrics/probes': ['metrics'],
    '/metrics/resource': ['metrics'],
    '/pods/': ['pods', 'proxy'],
    '/portForward/{podNamespace}/{podID}': ['proxy'],
    '/portForward/{podNamespace}/{podID}/{uid}': ['proxy'],
    '/run/{podNamespace}/{podID}/{containerName}': ['proxy'],
    '/run/{podNamespace}/{podID}/{uid}/{containerName}': ['proxy'],
    '/runningpods/': ['pods', 'proxy'],
    '/stats/': ['stats'],
    '/stats/summary': ['stats'],
  };
  const verbs: [string, string][] = [
    ['POST', 'create'],
    ['GET', 'get'],
    ['PUT', 'update'],
    ['PATCH', 'patch'],
    ['DELETE', 'delete'],
  ];
  for (const [path, subresources] of Object.entries(table)) {
    it(`${path} → ${subresources.join(', ')}`, () => {
      expect(nodeSubresources(path)).toEqual(subresources);
      // bootlet asks `create` for the streaming paths whatever the method (README, differs from the kubelet).
      const streaming = /^\/(exec|attach|portForward|run)\//.test(path);
      for (const [method, verb] of verbs) {
        expect(requestAttributes(method, path)).toEqual({ verb: streaming ? 'create' : verb, subresources });
      }
    });
  }

  it('/pods without the slash and /logs/ with a query path are the same endpoints; /podsx and /logs are not', () => {
    expect(nodeSubresources('/pods')).toEqual(['pods', 'proxy']);
    expect(nodeSubresources('/runningpods')).toEqual(['pods', 'proxy']);
    expect(nodeSubresources('/podsx')).toEqual(['proxy']);
    // isSubpath trims the handler path's slash: /logs itself is the logs endpoint's subpath too.
    expect(nodeSubresources('/logs')).toEqual(['log']);
  });
});
