// The pod's last status, pushed forward by its worker once: from the stopped containers, before the
// clean-up removes them (the kubelet's pod worker sets it in the status manager at the end of
// syncTerminatingPod), or at once for a pod that never ran.
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/error-message.js';
import type { PodWorkerSnapshot } from './snapshot.js';

export interface FinalStatusRecorder {
  /** Computes and keeps the pod's final status from the worker as `worker` says it is. */
  record(worker: PodWorkerSnapshot): Promise<void>;
}

/** Longest the clean-up waits for the final status: a slow status must not keep a pod's remains forever. */
const FINAL_STATUS_WAIT_MS = 5_000;

/** Never rejects and never waits long: a status that cannot be computed must not hold the clean-up. */
export async function recordFinalStatus(
  recorder: FinalStatusRecorder | undefined,
  worker: PodWorkerSnapshot,
  logger: Logger,
): Promise<void> {
  if (!recorder) return;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, FINAL_STATUS_WAIT_MS)));
  try {
    await Promise.race([
      recorder
        .record(worker)
        .catch((err: unknown) =>
          logger.warn('Failed to record the final pod status', { podUID: worker.uid, err: errorMessage(err) }),
        ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
