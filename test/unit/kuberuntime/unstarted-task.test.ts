// The repair of containerd#11037 against fakes of the CRI and of containerd's task service: it acts
// only on a container the CRI calls a failed start whose task never ran, and the removal the CRI
// refused then goes through. On a real containerd the state is met by the hardening e2e test that
// kills the agent in a crash loop (before this repair, about 1 run in 25 left a pod it could never remove).
import { describe, expect, it } from 'vitest';
import {
  ContainerState,
  CriError,
  type ContainerStatus,
  type ImageService,
  type RuntimeService,
} from '../../../src/cri/cri-types.js';
import { ContainerdTasksError, TaskStatus, type TaskStatusCode } from '../../../src/cri/containerd-tasks.js';
import { memoryLogger } from '../../../src/log/logger.js';
import { CriPodRuntime } from '../../../src/kuberuntime/pod-operations.js';
import { UnstartedTasks, type TaskService } from '../../../src/kuberuntime/unstarted-task.js';
import { useTmpDir } from '../../support/tmp.js';

const ID = 'c0ffee'.repeat(10) + 'abcd';
const REFUSAL = new CriError(
  'RemoveContainer',
  9,
  `failed to delete containerd container "${ID}": cannot delete running task ${ID}: failed precondition`,
);

function fakeTasks(initial: TaskStatusCode | undefined, o: { unimplemented?: boolean; stopsOnKill?: boolean } = {}) {
  let status = initial;
  const calls: string[] = [];
  let closed = 0;
  const tasks: TaskService = {
    taskStatus: async () => {
      calls.push('Get');
      if (o.unimplemented)
        throw new ContainerdTasksError('Get', 12, 'unknown service containerd.services.tasks.v1.Tasks');
      return status;
    },
    kill: async () => {
      calls.push('Kill');
      if (o.stopsOnKill !== false) status = TaskStatus.STOPPED;
    },
    delete: async () => {
      calls.push('Delete');
      if (status !== TaskStatus.STOPPED)
        throw new ContainerdTasksError('Delete', 9, 'task must be stopped before deletion');
      status = undefined;
    },
    close: () => void closed++,
  };
  return { tasks, calls, closed: () => closed, status: () => status };
}

const criStatus = (state: ContainerState, reason: string) =>
  ({
    id: ID,
    state,
    reason,
    message: 'failed to create containerd task: failed to get task pid: context canceled: unknown',
  }) as unknown as ContainerStatus;

function repair(status: ContainerStatus, tasks: TaskService) {
  const { logger, lines } = memoryLogger();
  const runtime = { containerStatus: async () => status } as unknown as RuntimeService;
  return { unstarted: new UnstartedTasks({ runtime, tasks: () => tasks, logger }), lines };
}

describe('UnstartedTasks', () => {
  it('kills and deletes the created task of a failed start, says so once, and closes its connection', async () => {
    const t = fakeTasks(TaskStatus.CREATED);
    const { unstarted, lines } = repair(criStatus(ContainerState.CONTAINER_EXITED, 'StartError'), t.tasks);
    expect(await unstarted.release(ID)).toBe(true);
    expect(t.calls).toEqual(['Get', 'Kill', 'Get', 'Delete']);
    expect(t.status()).toBeUndefined();
    expect(t.closed()).toBe(1);
    const said = lines.filter((l) => l.includes('containerd#11037'));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(ID);
  });

  it('deletes a task of a failed start that is already stopped, without a kill', async () => {
    const t = fakeTasks(TaskStatus.STOPPED);
    const { unstarted } = repair(criStatus(ContainerState.CONTAINER_EXITED, 'StartError'), t.tasks);
    expect(await unstarted.release(ID)).toBe(true);
    expect(t.calls).toEqual(['Get', 'Delete']);
  });

  it('never touches a task that runs, or a container the CRI does not call a failed start', async () => {
    const running = fakeTasks(TaskStatus.RUNNING);
    expect(
      await repair(criStatus(ContainerState.CONTAINER_EXITED, 'StartError'), running.tasks).unstarted.release(ID),
    ).toBe(false);
    expect(running.calls).toEqual(['Get']);
    for (const [state, reason] of [
      [ContainerState.CONTAINER_CREATED, ''],
      [ContainerState.CONTAINER_EXITED, 'Error'],
      [ContainerState.CONTAINER_RUNNING, ''],
    ] as const) {
      const t = fakeTasks(TaskStatus.CREATED);
      expect(await repair(criStatus(state, reason), t.tasks).unstarted.release(ID)).toBe(false);
      expect(t.calls).toEqual([]);
    }
  });

  it('leaves the refusal standing on a runtime without containerd task service, or when the kill did not take', async () => {
    const none = fakeTasks(TaskStatus.CREATED, { unimplemented: true });
    expect(
      await repair(criStatus(ContainerState.CONTAINER_EXITED, 'StartError'), none.tasks).unstarted.release(ID),
    ).toBe(false);
    expect(none.closed()).toBe(1);
    const stuck = fakeTasks(TaskStatus.CREATED, { stopsOnKill: false });
    expect(
      await repair(criStatus(ContainerState.CONTAINER_EXITED, 'StartError'), stuck.tasks).unstarted.release(ID),
    ).toBe(false);
    expect(stuck.calls).not.toContain('Delete');
  });
});

describe('CriPodRuntime.removeContainer', () => {
  function runtimeRefusingUntilRepaired(task: ReturnType<typeof fakeTasks>) {
    const calls: string[] = [];
    const runtime = {
      removeContainer: async () => {
        calls.push('RemoveContainer');
        if (task.status() !== undefined) throw REFUSAL;
      },
      containerStatus: async () => criStatus(ContainerState.CONTAINER_EXITED, 'StartError'),
    } as unknown as RuntimeService;
    return { runtime, calls };
  }
  const dir = useTmpDir('unstarted-task');
  const ops = (runtime: RuntimeService, tasks: TaskService | undefined) => {
    const { logger } = memoryLogger();
    return new CriPodRuntime({
      runtime,
      images: {} as ImageService,
      rootDir: `${dir}/root`,
      podLogsDir: `${dir}/logs/pods`,
      nodeName: 'n',
      nodeIP: '10.0.0.1',
      resolvConf: '',
      logger,
      unstartedTasks: tasks && new UnstartedTasks({ runtime, tasks: () => tasks, logger }),
    });
  };

  it('removes the container once the repair took its task away', async () => {
    const task = fakeTasks(TaskStatus.CREATED);
    const { runtime, calls } = runtimeRefusingUntilRepaired(task);
    await ops(runtime, task.tasks).removeContainer(ID);
    expect(calls).toEqual(['RemoveContainer', 'RemoveContainer']);
  });

  it('passes the refusal on when the repair does not apply', async () => {
    const task = fakeTasks(TaskStatus.RUNNING);
    const { runtime, calls } = runtimeRefusingUntilRepaired(task);
    await expect(ops(runtime, task.tasks).removeContainer(ID)).rejects.toBe(REFUSAL);
    await expect(ops(runtime, undefined).removeContainer(ID)).rejects.toBe(REFUSAL);
    expect(calls).toEqual(['RemoveContainer', 'RemoveContainer']);
  });
});
