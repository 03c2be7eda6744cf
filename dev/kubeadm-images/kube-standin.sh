#!/bin/sh
# Stand-in for kube-apiserver, kube-controller-manager and kube-scheduler (this machine has none of
# them), run under those names. It reads the flags the real component would, fails as it would when
# a file named by a flag is missing or empty, and serves HTTPS on the component's secure port with
# `openssl s_server -www`, which answers 200 to any GET: the manifests' /livez, /readyz and /healthz
# probes pass. Without --tls-cert-file it makes a self-signed certificate, as the real ones do.
name=${0##*/}
case $name in
  kube-apiserver) port=6443 ;;
  kube-controller-manager) port=10257 ;;
  kube-scheduler) port=10259 ;;
  *)
    echo "kube-standin: run me as kube-apiserver, kube-controller-manager or kube-scheduler" >&2
    exit 2
    ;;
esac
bind=0.0.0.0
cert=
key=
for a; do
  case $a in
    --secure-port=*) port=${a#*=} ;;
    --bind-address=*) bind=${a#*=} ;;
    --tls-cert-file=*) cert=${a#*=} ;;
    --tls-private-key-file=*) key=${a#*=} ;;
  esac
  case $a in
    --*-file=* | --kubeconfig=* | --*-kubeconfig=*)
      if [ ! -s "${a#*=}" ]; then
        echo "$name (stand-in): ${a%%=*}: ${a#*=} is missing or empty" >&2
        exit 1
      fi
      ;;
  esac
done
if [ -z "$cert" ]; then
  cert=/tmp/$name.crt
  key=/tmp/$name.key
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 365 \
    -subj "/CN=localhost@$(date +%s)" -keyout "$key" -out "$cert" 2>/dev/null || exit 1
fi
# PID 1 of the container: without a handler SIGTERM would be ignored and every stop would take the
# whole grace period.
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; exit 0' TERM INT
echo "$name (stand-in): serving HTTPS on $bind:$port" >&2
openssl s_server -quiet -www -accept "$bind:$port" -cert "$cert" -key "$key" </dev/null &
pid=$!
wait "$pid"
