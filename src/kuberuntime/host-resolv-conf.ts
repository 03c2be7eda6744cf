// The node's resolv.conf (kubelet --resolv-conf), read once at start for the pods with host DNS
// (dns.ts). "" means no host DNS at all (undefined); a file that cannot be read is warned of once
// here and gives pods an empty one.
import { readFileSync } from 'node:fs';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/error-message.js';

export function readHostResolvConf(file: string, logger: Logger): string | undefined {
  if (file === '') return undefined;
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    logger.warn('Cannot read resolvConf; pods with host DNS get no nameservers', { file, err: errorMessage(err) });
    return '';
  }
}
