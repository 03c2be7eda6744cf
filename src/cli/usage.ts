// `bootlet --help`, written from the settings table.
import { KUBERNETES_VERSION } from '../version.js';
import type { AnySetting } from './settings/setting.js';
import { ALL_SETTINGS } from './settings/table.js';

function flagLine(s: AnySetting): string {
  const names = s.shorthand ? `-${s.shorthand}, --${s.flag}` : `    --${s.flag}`;
  const placeholder = s.type.isBool ? '' : ` ${s.type.placeholder}`;
  const dflt = s.default !== undefined && !s.type.isZero(s.default) ? ` (default ${s.type.format(s.default)})` : '';
  const left = `  ${names}${placeholder}`;
  return `${left.padEnd(46)} ${s.help}${dflt}${s.deprecated ? ` (DEPRECATED: ${s.deprecated})` : ''}`;
}

function wrap(words: string[], width: number, indent: string): string[] {
  const lines: string[] = [];
  let line = indent;
  for (const w of words) {
    if (line.length + w.length + 1 > width && line.trim() !== '') {
      lines.push(line.trimEnd());
      line = indent;
    }
    line += `${w} `;
  }
  if (line.trim() !== '') lines.push(line.trimEnd());
  return lines;
}

export function usage(): string {
  const flags = ALL_SETTINGS.filter((s) => s.flag !== undefined);
  const applied = flags.filter((s) => s.status === 'applied');
  const others = flags.filter((s) => s.status !== 'applied').map((s) => `--${s.flag}`);
  return [
    'bootlet: a static-pod node agent. Runs the Pod manifests in a directory through the CRI.',
    '',
    'Usage:',
    '  bootlet [flags]        run the agent',
    '  bootlet version        print the version (--version prints it as the kubelet does)',
    '  bootlet pods [-o wide|json]',
    "                         list the running agent's pods, like kubectl get pods",
    '  bootlet logs POD [CONTAINER] [-f] [-p]',
    "                         a static pod's container log, from the CRI log files",
    '  bootlet validate [FILE|DIR]... [--config F] [-o json]',
    '                         check manifests and a KubeletConfiguration as the agent would read them',
    '',
    `Flags, as the kubelet (${KUBERNETES_VERSION}) names them; flags win over --config:`,
    ...applied.map(flagLine),
    '  -h, --help                                     this text',
    '      --version                                  print "Kubernetes <version>" and exit',
    '',
    'Also accepted, so that kubelet command lines work, but not acted on (set to anything but the',
    "kubelet's default, they are named in one warning at start):",
    ...wrap(others, 100, '  '),
  ].join('\n');
}
