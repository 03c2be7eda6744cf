// Raises logind's InhibitDelayMaxSec to what the shutdown needs, through the drop-in the kubelet
// writes (the same path, so a node that ran a kubelet keeps one file, not two).
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage } from '../util/error-message';

export const LOGIND_CONF_DIR = '/etc/systemd/logind.conf.d';
export const LOGIND_DROPIN = '99-kubelet.conf';

export function dropInText(delaySeconds: number): string {
  return `# Kubelet logind override\n[Login]\nInhibitDelayMaxSec=${Math.round(delaySeconds)}\n`;
}

/** Writes the drop-in atomically; returns its path. */
export function writeLogindDropIn(delaySeconds: number, dir: string = LOGIND_CONF_DIR): string {
  const file = join(dir, LOGIND_DROPIN);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    const tmp = `${file}.tmp-${process.pid}`;
    writeFileSync(tmp, dropInText(delaySeconds), { mode: 0o644 });
    renameSync(tmp, file);
  } catch (err) {
    throw new Error(`failed writing logind shutdown inhibit override file ${file}: ${errorMessage(err)}`);
  }
  return file;
}
