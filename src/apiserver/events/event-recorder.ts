// What the rest of bootlet records Events through: the object, the type, the reason and the
// message, as client-go's EventRecorder takes them. It returns at once whatever the server does.

/** The object an event is about: a (static/mirror) pod or this node. */
export interface EventObject {
  kind: 'Pod' | 'Node';
  namespace?: string;
  name: string;
  /**
   * For a pod: the static pod UID (config hash). `kubectl describe pod <mirror>` searches events by
   * the mirror's `kubernetes.io/config.mirror` value, which is that hash, as the kubelet records them.
   * For the node: the node name, as the kubelet's node reference carries it.
   */
  uid: string;
  /** `spec.containers{name}` for container events. */
  fieldPath?: string;
}

export type EventType = 'Normal' | 'Warning';

export interface EventRecorder {
  event(object: EventObject, type: EventType, reason: string, message: string): void;
}
