import { describe, expect, it } from 'vitest';
import { loadManifest } from '../../../src/config/manifest';
import { WEB_YAML } from './helpers';

const load = (text: string) => loadManifest('/m/web.yaml', text, 'node-a', new Date(0));

describe('loadManifest', () => {
  it('returns the pod and unknown-field warnings', () => {
    const r = load(WEB_YAML.replace('    image: nginx\n', '    image: nginx\n    imagePullPolcy: Never\n'));
    expect('pod' in r && r.warnings).toEqual(['unknown field "spec.containers[0].imagePullPolcy"']);
  });

  it('returns parse errors with position and the file', () => {
    const r = load('apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n   x: 1\n');
    expect('error' in r && r.error).toMatchObject({ file: '/m/web.yaml', line: 4 });
  });

  it('returns schema errors before semantic ones', () => {
    const r = load(WEB_YAML.replace('containerPort: 80', 'containerPort: "80"'));
    expect('error' in r && r.error.message).toBe(
      'spec.containers[0].ports[0].containerPort: must be an integer, found a string',
    );
  });

  it('joins all semantic problems into one line', () => {
    const r = load(
      WEB_YAML.replace(
        '  hostNetwork: true\n',
        '  serviceAccountName: sa\n  volumes: [{name: s, secret: {secretName: s}}]\n',
      ),
    );
    expect('error' in r && r.error.message).toBe(
      'spec.serviceAccountName: static pods may not reference serviceaccounts; spec.volumes[0]: static pods may not reference secrets',
    );
  });
});
