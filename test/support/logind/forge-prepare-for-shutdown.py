#!/usr/bin/python3
# A local user's forged PrepareForShutdown(true) for bootlet's node-shutdown tests: emitted on the bus
# under logind's path and interface (broadcast), and sent to every other connection alone (unicast,
# which no match rule filters), argv[1] times. Prints one JSON line with the connections it reached.
import json, sys
import dbus, dbus.lowlevel

bus = dbus.SystemBus()
me = bus.get_unique_name()
daemon = dbus.Interface(bus.get_object('org.freedesktop.DBus', '/org/freedesktop/DBus'), 'org.freedesktop.DBus')
owner = str(daemon.GetNameOwner('org.freedesktop.login1'))
targets = [str(n) for n in daemon.ListNames() if n.startswith(':') and n not in (me, owner)]

def emit(destination):
    m = dbus.lowlevel.SignalMessage('/org/freedesktop/login1', 'org.freedesktop.login1.Manager', 'PrepareForShutdown')
    m.append(True, signature='b')
    if destination:
        m.set_destination(destination)
    bus.send_message(m)

times = int(sys.argv[1]) if len(sys.argv) > 1 else 1
for _ in range(times):
    emit(None)
    for t in targets:
        emit(t)
bus.flush()
print(json.dumps({'event': 'forged', 'sender': me, 'targets': targets, 'times': times}))
