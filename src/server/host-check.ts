// The unauthenticated TCP endpoints answer only requests addressed to a loopback name or address.
// A browser on the node sends the page's own host name in `Host`, so a site whose name was
// re-pointed at 127.0.0.1 (DNS rebinding) is refused; a name cannot be trusted, an IP literal can:
// no attacker-controlled page is ever served from one. Tools on the node (kubeadm's kubelet-check
// sends `Host: 127.0.0.1:10248`, curl, probes) are unaffected.
import { BlockList, isIP } from 'node:net';
import type { Logger } from '../log/logger.js';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** The host part of a Host header value (`name`, `name:port`, `[v6]`, `[v6]:port`), or undefined when malformed. */
export function hostOfHeader(value: string): string | undefined {
  let host: string;
  let rest: string;
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0) return undefined;
    host = value.slice(1, end);
    rest = value.slice(end + 1);
    if (isIP(host) !== 6) return undefined;
  } else {
    const colon = value.indexOf(':');
    host = colon < 0 ? value : value.slice(0, colon);
    rest = colon < 0 ? '' : value.slice(colon);
  }
  if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return undefined;
  return host === '' ? undefined : host.toLowerCase();
}

function familyOf(address: string): 'ipv4' | 'ipv6' {
  return isIP(address) === 6 ? 'ipv6' : 'ipv4';
}

function sameAddress(a: string, b: string): boolean {
  const one = new BlockList();
  one.addAddress(b, familyOf(b));
  // BlockList also matches an IPv4 address against its ::ffff: form (dual-stack sockets).
  return one.check(a, familyOf(a));
}

/**
 * Whether a request may be answered.
 * @param host the Host header (undefined when absent)
 * @param httpVersion `1.0`, `1.1`: an HTTP/1.0 request may omit Host (only non-browser tools do)
 * @param localAddress the address the connection arrived on: its literal is accepted too, so a
 *   probe of `--healthz-bind-address=<node IP>` from elsewhere keeps working
 */
export function isAllowedHost(
  host: string | undefined,
  httpVersion: string,
  localAddress: string | undefined,
): boolean {
  if (host === undefined || host === '') return httpVersion === '1.0' || httpVersion === '0.9';
  const name = hostOfHeader(host);
  if (name === undefined) return false;
  if (name === 'localhost' || name === 'localhost.') return true;
  const family = isIP(name);
  if (family === 0) return false;
  if (LOOPBACK.check(name, familyOf(name))) return true;
  return localAddress !== undefined && isIP(localAddress) !== 0 && sameAddress(name, localAddress);
}

const MAX_LOGGED_HOST = 100;

/**
 * Logs refused requests at most once per interval, with the count in between: a browser tab
 * hammering the port must not flood the log.
 */
export class RefusalLog {
  private lastLineAt: number | undefined;
  private suppressed = 0;

  constructor(
    private readonly logger: Logger,
    private readonly endpoint: string,
    private readonly intervalMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  refused(host: string | undefined, remote: string | undefined): void {
    const t = this.now();
    if (this.lastLineAt !== undefined && t - this.lastLineAt < this.intervalMs) {
      this.suppressed++;
      return;
    }
    this.logger.warn(
      'Refused a request whose Host is not a loopback name or address (DNS rebinding?); at most one such line a minute',
      {
        endpoint: this.endpoint,
        host: host === undefined ? '(none)' : host.slice(0, MAX_LOGGED_HOST),
        remote,
        refusedSinceLastLine: this.lastLineAt === undefined ? undefined : this.suppressed,
      },
    );
    this.lastLineAt = t;
    this.suppressed = 0;
  }
}
