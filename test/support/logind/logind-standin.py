#!/usr/bin/python3
# A stand-in for systemd-logind on a private dbus-daemon, for bootlet's node-shutdown tests:
# org.freedesktop.login1.Manager's Inhibit (a real pipe fd, released when every copy is closed),
# ListInhibitors, the InhibitDelayMaxUSec property (read from logind.conf.d drop-ins on KillUnit
# SIGHUP of systemd-logind.service, as logind reloads) and the PrepareForShutdown signal.
# Control on stdin, one word a line: "shutdown" / "cancel" emit PrepareForShutdown(true/false).
# Events on stdout, one JSON object a line, with a monotonic time in ms.
import json, os, sys, time, glob, configparser
import dbus, dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

DBusGMainLoop(set_as_default=True)
conf_dir = sys.argv[1]
default_delay_sec = int(sys.argv[2]) if len(sys.argv) > 2 else 5

def out(event, **kw):
    kw['event'] = event
    kw['t'] = time.monotonic() * 1000
    sys.stdout.write(json.dumps(kw) + '\n')
    sys.stdout.flush()

def read_delay():
    delay = default_delay_sec
    for f in sorted(glob.glob(os.path.join(conf_dir, '*.conf'))):
        cp = configparser.ConfigParser()
        cp.read(f)
        if cp.has_option('Login', 'InhibitDelayMaxSec'):
            delay = int(cp.get('Login', 'InhibitDelayMaxSec'))
    return delay * 1_000_000

bus = dbus.SystemBus()
MANAGER = 'org.freedesktop.login1.Manager'

class Logind(dbus.service.Object):
    def __init__(self):
        super().__init__(dbus.service.BusName('org.freedesktop.login1', bus), '/org/freedesktop/login1')
        self.delay_usec = read_delay()
        self.inhibitors = {}  # read fd -> (what, who, why, mode, uid, pid)

    @dbus.service.method(MANAGER, in_signature='ssss', out_signature='h', sender_keyword='sender')
    def Inhibit(self, what, who, why, mode, sender=None):
        dbus_iface = dbus.Interface(bus.get_object('org.freedesktop.DBus', '/org/freedesktop/DBus'), 'org.freedesktop.DBus')
        uid = int(dbus_iface.GetConnectionUnixUser(sender))
        pid = int(dbus_iface.GetConnectionUnixProcessID(sender))
        r, w = os.pipe()
        self.inhibitors[r] = (str(what), str(who), str(why), str(mode), uid, pid)
        GLib.io_add_watch(r, GLib.IO_HUP | GLib.IO_ERR, self.released)
        out('inhibit', what=str(what), who=str(who), why=str(why), mode=str(mode), pid=pid)
        fd = dbus.types.UnixFd(w)
        os.close(w)
        return fd

    def released(self, fd, cond):
        i = self.inhibitors.pop(fd, None)
        os.close(fd)
        if i:
            out('released', who=i[1], pid=i[5])
        return False

    @dbus.service.method(MANAGER, in_signature='', out_signature='a(ssssuu)')
    def ListInhibitors(self):
        return [dbus.Struct(i, signature='ssssuu') for i in self.inhibitors.values()]

    @dbus.service.signal(MANAGER, signature='b')
    def PrepareForShutdown(self, active):
        out('prepare', active=bool(active))

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature='ss', out_signature='v')
    def Get(self, iface, prop):
        if iface == MANAGER and prop == 'InhibitDelayMaxUSec':
            return dbus.UInt64(self.delay_usec)
        raise dbus.exceptions.DBusException('Unknown property ' + prop, name='org.freedesktop.DBus.Error.UnknownProperty')

logind = Logind()

class Systemd(dbus.service.Object):
    def __init__(self):
        super().__init__(dbus.service.BusName('org.freedesktop.systemd1', bus), '/org/freedesktop/systemd1')

    @dbus.service.method('org.freedesktop.systemd1.Manager', in_signature='ssi', out_signature='')
    def KillUnit(self, unit, who, signal):
        if unit == 'systemd-logind.service' and signal == 1:
            logind.delay_usec = read_delay()
            out('reloaded', delayUSec=logind.delay_usec)
        else:
            raise dbus.exceptions.DBusException('Unit %s not loaded.' % unit, name='org.freedesktop.systemd1.NoSuchUnit')

Systemd()

pending = b''

def on_stdin(fd, cond):
    # Raw reads: several lines may come in one write, and a buffered readline would sit on the rest.
    global pending
    chunk = os.read(fd, 4096)
    if not chunk:
        loop.quit()
        return False
    pending += chunk
    while b'\n' in pending:
        line, pending = pending.split(b'\n', 1)
        word = line.decode().strip()
        if word == 'shutdown':
            logind.PrepareForShutdown(True)
        elif word == 'cancel':
            logind.PrepareForShutdown(False)
    return True

GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_IN | GLib.IO_HUP, on_stdin)
out('ready', delayUSec=logind.delay_usec)
loop = GLib.MainLoop()
loop.run()
