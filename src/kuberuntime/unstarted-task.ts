// containerd#11037: a StartContainer cut off between the shim's create and its reply (the agent
// killed at that instant, a deadline) leaves the container EXITED with reason StartError in the CRI
// and its task CREATED in the shim. The CRI's RemoveContainer then answers "cannot delete running
// task" for ever; only a restart of containerd clears it, and the pod cannot be removed. A created
// task has never run the container's command (runc waits before exec), so nothing is lost by
// removing it: this kills and deletes it through containerd's own task service, after which the
// CRI removes the container. Anything else (a task that ran, a container the CRI does not call a
// failed start, a runtime without that service) is left as it is.
import { ContainerState, CriError, type RuntimeService } from '../cri/cri-types.js';
import {
  ContainerdTasksError,
  TaskStatus,
  type ContainerdTasksClient,
  type TaskStatusCode,
} from '../cri/containerd-tasks.js';
import type { Logger } from '../log/logger.js';

/** What the repair needs of the task service; a fake in unit tests. */
export type TaskService = Pick<ContainerdTasksClient, 'taskStatus' | 'kill' | 'delete' | 'close'>;

/** How long a killed task may take to be reaped before the removal is left to the next retry. */
const STOP_WAIT_MS = 2000;
const STOP_POLL_MS = 50;

export interface UnstartedTaskOptions {
  runtime: Pick<RuntimeService, 'containerStatus'>;
  /** Opens the task service for one repair (rare: no connection is kept for it). */
  tasks: () => TaskService;
  logger: Logger;
}

export class UnstartedTasks {
  constructor(private readonly o: UnstartedTaskOptions) {}

  /** Whether RemoveContainer's refusal of this container is the one this repairs. */
  static isRefusal(err: unknown): boolean {
    return err instanceof CriError && err.code === 9 && err.details.includes('cannot delete running task');
  }

  /**
   * Removes the never-started task of a container whose start failed; true when it is gone and the
   * removal is worth trying again at once.
   */
  async release(containerId: string): Promise<boolean> {
    let status;
    try {
      status = await this.o.runtime.containerStatus(containerId);
    } catch (err) {
      if (err instanceof CriError && err.notFound) return true;
      throw err;
    }
    if (status.state !== ContainerState.CONTAINER_EXITED || status.reason !== 'StartError') return false;
    const tasks = this.o.tasks();
    try {
      let task = await tasks.taskStatus(containerId);
      if (task === undefined) return true;
      const wasCreated = task === TaskStatus.CREATED;
      if (wasCreated) {
        await tasks.kill(containerId);
        task = await this.waitStopped(tasks, containerId);
      }
      if (task !== undefined && task !== TaskStatus.STOPPED) return false;
      await tasks.delete(containerId);
      this.o.logger.warn('Removed a task containerd kept from a container start it never finished (containerd#11037)', {
        containerID: containerId,
        startError: status.message,
        task: wasCreated ? 'created, killed and deleted' : 'stopped, deleted',
      });
      return true;
    } catch (err) {
      // Not a containerd, or its task service is not on this socket: the refusal stands as it was.
      if (err instanceof ContainerdTasksError && err.code === 12) return false;
      throw err;
    } finally {
      tasks.close();
    }
  }

  private async waitStopped(tasks: TaskService, id: string): Promise<TaskStatusCode | undefined> {
    const deadline = Date.now() + STOP_WAIT_MS;
    for (;;) {
      const s = await tasks.taskStatus(id);
      if (s === undefined || s === TaskStatus.STOPPED || Date.now() >= deadline) return s;
      await new Promise((r) => setTimeout(r, STOP_POLL_MS));
    }
  }
}
