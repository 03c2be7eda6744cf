// Whether every subscriber of the runtime's CRI GetContainerEvents gets every event. containerd
// before 2.0 feeds all its subscribers from one channel, so each event reaches one of them only
// (containerd#7318; 2.0 broadcasts, containerd#9661): with `crictl events` or another agent
// subscribed, bootlet would miss deaths until its safety-net relist. Seen on Debian's 1.7.24: two
// streams got alternate events. containerd's own event service gives every subscriber every event.

/** The major of a runtime version as containerd writes it (`1.7.24~ds1`, `v2.1.9`, `2.1.9+unknown`). */
function majorOf(runtimeVersion: string): number | undefined {
  const m = /^v?(\d+)\./.exec(runtimeVersion.trim());
  return m ? Number(m[1]) : undefined;
}

/**
 * false for containerd 1.x (which serves the stream from 1.7 on, shared); true otherwise, a version
 * it cannot read included: a runtime that serves the stream is taken at its word.
 */
export function criEventsReachEverySubscriber(runtimeName: string, runtimeVersion: string): boolean {
  if (runtimeName !== 'containerd') return true;
  const major = majorOf(runtimeVersion);
  return major === undefined || major >= 2;
}
