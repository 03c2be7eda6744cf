// containerd's own log (info level: each CRI call's receipt and return, stamped in ns) read as the
// marks of one pod's start: where a start's time goes as the runtime saw it.
import * as fs from 'node:fs';

export interface CdEvent {
  at: number;
  msg: string;
}

export function containerdEvents(logPath: string): CdEvent[] {
  const out: CdEvent[] = [];
  for (const line of fs.readFileSync(logPath, 'utf8').split('\n')) {
    const m = /^time="([^"]+)" level=\w+ msg="(.*)"/.exec(line);
    if (!m) continue;
    const iso = m[1]!;
    // ns precision: Date parses ms; add the rest.
    const frac = /\.(\d+)/.exec(iso)?.[1] ?? '0';
    const at = Date.parse(iso.replace(/\.\d+/, '.' + frac.slice(0, 3))) + Number(`0.${frac.slice(3) || '0'}`);
    out.push({ at, msg: m[2]!.replace(/\\"/g, '"') });
  }
  return out;
}

/** The CRI call marks of one pod, from containerd's log (ms since the epoch). */
export function marks(events: CdEvent[], podName: string): Record<string, number> {
  const r: Record<string, number> = {};
  const sb = events.find((e) => e.msg.startsWith('RunPodSandbox for') && e.msg.includes(`Name:${podName},`));
  if (!sb) return r;
  r.runSandbox = sb.at;
  const ret = events.find(
    (e) =>
      e.msg.startsWith('RunPodSandbox for') &&
      e.msg.includes(`Name:${podName},`) &&
      e.msg.includes('returns sandbox id'),
  );
  if (!ret) return r;
  r.sandboxReturned = ret.at;
  const id = /returns sandbox id "([0-9a-f]+)"/.exec(ret.msg)?.[1];
  const cc = events.find(
    (e) => e.msg.startsWith(`CreateContainer within sandbox "${id}"`) && !e.msg.includes('returns'),
  );
  const ccr = events.find(
    (e) => e.msg.startsWith(`CreateContainer within sandbox "${id}"`) && e.msg.includes('returns container id'),
  );
  if (cc) r.createContainer = cc.at;
  if (ccr) {
    r.containerCreated = ccr.at;
    const cid = /returns container id "([0-9a-f]+)"/.exec(ccr.msg)?.[1];
    const sc = events.find((e) => e.msg === `StartContainer for "${cid}"`);
    const scr = events.find((e) => e.msg === `StartContainer for "${cid}" returns successfully`);
    if (sc) r.startContainer = sc.at;
    if (scr) r.started = scr.at;
  }
  return r;
}
