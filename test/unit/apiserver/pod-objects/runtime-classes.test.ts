// The kubelet's RuntimeClass manager: one watch of every node.k8s.io/v1 RuntimeClass, from the
// first pod that names one; a look-up reads the handler, or NotFound in the API machinery's words;
// before a connection (the deferred one) a RuntimeClass is not found.
import { describe, expect, it } from 'vitest';
import { nullLogger } from '../../../../src/log/logger.js';
import {
  ApiRuntimeClasses,
  DeferredRuntimeClasses,
  RUNTIME_CLASSES_PATH,
} from '../../../../src/apiserver/pod-objects/runtime-classes.js';
import { FakeObjectServer } from './fake-object-server.js';
import { FakeGate } from '../client/gate.js';

describe('RuntimeClasses', () => {
  it('lists and watches them only once a pod names one, then reads the handler from the cache', async () => {
    const server = new FakeObjectServer();
    server.put(RUNTIME_CLASSES_PATH, { metadata: { name: 'gvisor' }, handler: 'runsc' });
    const classes = new ApiRuntimeClasses({ client: server.client, gate: new FakeGate(), logger: nullLogger });
    expect(server.calls).toEqual([]);
    expect(await classes.handlerOf('gvisor')).toBe('runsc');
    await expect(classes.handlerOf('kata')).rejects.toThrow('runtimeclass.node.k8s.io "kata" not found');
    server.put(RUNTIME_CLASSES_PATH, { metadata: { name: 'kata' }, handler: 'kata-qemu' });
    expect(await classes.handlerOf('kata')).toBe('kata-qemu');
    server.remove(RUNTIME_CLASSES_PATH, 'gvisor');
    await expect(classes.handlerOf('gvisor')).rejects.toThrow('runtimeclass.node.k8s.io "gvisor" not found');
    expect(server.count('list', RUNTIME_CLASSES_PATH)).toBe(1);
    expect(server.openWatches(RUNTIME_CLASSES_PATH)).toBe(1);
    await classes.stop();
  });

  it('before a connection: not found; then the connection answers', async () => {
    const deferred = new DeferredRuntimeClasses();
    await expect(deferred.handlerOf('gvisor')).rejects.toThrow('runtimeclass.node.k8s.io "gvisor" not found');
    const server = new FakeObjectServer();
    server.put(RUNTIME_CLASSES_PATH, { metadata: { name: 'gvisor' }, handler: 'runsc' });
    const classes = new ApiRuntimeClasses({ client: server.client, gate: new FakeGate(), logger: nullLogger });
    deferred.attach(classes);
    expect(await deferred.handlerOf('gvisor')).toBe('runsc');
    await classes.stop();
  });
});
