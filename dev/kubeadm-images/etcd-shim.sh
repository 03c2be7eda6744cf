#!/bin/sh
# etcd as kubeadm's manifests start it (written for etcd 3.5/3.6), run on Debian's etcd 3.4.
# Flags 3.4 spells differently are mapped, nothing else is changed:
#   --feature-gates=InitialCorruptCheck=B  -> --experimental-initial-corrupt-check=B (other gates: dropped, said on stderr)
#   --watch-progress-notify-interval=D     -> --experimental-watch-progress-notify-interval=D
#   --listen-metrics-urls=http://H:P       -> etcd serves metrics on http://H:(P+10000), and a bridge on H:P
#                                             answers /livez and /readyz (etcd >= 3.5.11) from 3.4's /health
#                                             and passes every other path on.
REAL=/usr/local/lib/etcd/etcd
BRIDGE=/usr/local/lib/etcd/probe-bridge
bridge_host=
bridge_port=
for a; do
  shift
  case $a in
    --feature-gates=*)
      gates=${a#*=}
      IFS=,
      for g in $gates; do
        case $g in
          InitialCorruptCheck=*) set -- "$@" "--experimental-initial-corrupt-check=${g#*=}" ;;
          *) echo "etcd (bootlet test image): etcd 3.4 has no feature gate ${g%%=*}; dropped" >&2 ;;
        esac
      done
      unset IFS
      ;;
    --watch-progress-notify-interval=*) set -- "$@" "--experimental-watch-progress-notify-interval=${a#*=}" ;;
    --listen-metrics-urls=http://*:*)
      hostport=${a#--listen-metrics-urls=http://}
      case $hostport in
        *,* | */*) set -- "$@" "$a" ;;
        *)
          bridge_host=${hostport%:*}
          bridge_port=${hostport##*:}
          set -- "$@" "--listen-metrics-urls=http://$bridge_host:$((bridge_port + 10000))"
          ;;
      esac
      ;;
    *) set -- "$@" "$a" ;;
  esac
done
if [ -n "$bridge_port" ]; then
  ETCD_METRICS="http://$bridge_host:$((bridge_port + 10000))" nc -ll -p "$bridge_port" "$bridge_host" -e "$BRIDGE" &
fi
exec "$REAL" "$@"
