// The kubelet's words for a pod held back because the runtime's network is not ready (SyncPod:
// only host-network pods start while NetworkReady is false), and how soon it tries again.

/** NetworkNotReadyErrorMsg: the sync error is `network is not ready: <the runtime's network error>`. */
export const NETWORK_NOT_READY_ERROR_MSG = 'network is not ready';
/** The Warning event's reason (events.NetworkNotReady). */
export const NETWORK_NOT_READY_REASON = 'NetworkNotReady';
/** backOffOnTransientErrorPeriod: the pod worker retries a network-not-ready sync after 1 s (jittered). */
export const NETWORK_NOT_READY_RETRY_MS = 1000;
