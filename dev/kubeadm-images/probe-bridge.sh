#!/bin/sh
# One HTTP request on stdin, its answer on stdout (run by `nc -ll -e` for each connection).
# /livez and /readyz are etcd >= 3.5.11 endpoints; here both are 3.4's /health (livez serializable):
# 200 when etcd says {"health":"true"}, 503 otherwise. Other paths go to etcd as they are
# (a non-2xx answer from etcd becomes 503).
cr=$(printf '\r')
read -r method target _
while read -r line; do
  [ -z "${line%"$cr"}" ] && break
done
case $target in
  /livez | /livez\?*) upstream='/health?serializable=true' health=1 ;;
  /readyz | /readyz\?*) upstream='/health' health=1 ;;
  *) upstream=$target health= ;;
esac
status='503 Service Unavailable'
# (busybox 1.35's wget crashes with -T; timeout bounds it instead.)
if [ "$method" = GET ] && body=$(timeout 10 wget -q -O - "$ETCD_METRICS$upstream" 2>/dev/null); then
  status='200 OK'
  if [ -n "$health" ]; then
    case $body in
      *'"health":"true"'*) body="ok" ;;
      *) status='503 Service Unavailable' ;;
    esac
  fi
fi
printf 'HTTP/1.1 %s\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n%s\n' "$status" "$body"
