#!/bin/sh
# Fills the dispatcher list's placeholders from GATEWAY_1, GATEWAY_2, ... (HOST:PORT of each
# sprachrohr instance) and runs Kamailio in the foreground, logging to stderr. CALLER_NETWORKS,
# when set, is the CIDR list of who may place calls (anyone otherwise).
set -eu
list=/run/kamailio/dispatcher.list
cp /etc/kamailio/dispatcher.list.template "$list"
n=1
while eval "address=\${GATEWAY_$n:-}"; [ -n "$address" ]; do
  sed -i "/^#/!s|{{gateway_$n}}|$address|g" "$list"
  n=$((n + 1))
done
if grep -v '^#' "$list" | grep -q '{{gateway_'; then
  echo "kamailio-start: the dispatcher list still has placeholders; set GATEWAY_1, GATEWAY_2, ...:" >&2
  grep -v '^#' "$list" | grep '{{gateway_' >&2
  exit 1
fi
set -- -DD -E -f /etc/kamailio/kamailio.cfg -A "DISPATCHER_LIST=\"$list\""
if [ -n "${CALLER_NETWORKS:-}" ]; then set -- "$@" -A "CALLER_NETWORKS=\"$CALLER_NETWORKS\""; fi
exec kamailio "$@"
