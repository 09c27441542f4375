#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The provider on a 2-host, 2-rail emulated cluster: loading, listing, rail
# configuration in every accepted form, and a clear refusal of every invalid
# FI_MRAIL_RAILS.
#
# Needs MRAIL_BUILD (a configured and built tree); MRAIL_PRELOAD, when set,
# is preloaded into the programs that load the provider (sanitizer runtimes).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
testbed=$here/../../ci/testbed
provider_dir=$build/.libs
info_tool=$build/fabtests-ext/fi_mrail_info
require_built

testbed_cleanup_on_exit
"$testbed" up --hosts 2 --rails 2 >/dev/null || { fail setup "testbed up failed"; finish; }

# on HOST [VAR=value...] CMD...: runs CMD on an emulated host with mrail
# loadable; output to $out, stderr to $err, status to $rc.
out=$(mktemp) err=$(mktemp)
on() {
	local host=$1; shift
	"$testbed" exec "$host" env FI_PROVIDER_PATH="$provider_dir" \
		LD_PRELOAD="${MRAIL_PRELOAD:-}" FI_LOG_LEVEL=warn "$@" >"$out" 2>"$err"
	rc=$?
}

expect_ok() { # name: last command succeeded
	if [ "$rc" -eq 0 ]; then pass "$1"; else fail "$1" "exit $rc: $(head -c 400 "$err")"; fi
}

expect_out() { # name pattern: last command succeeded and printed pattern
	if [ "$rc" -eq 0 ] && grep -qE -- "$2" "$out"; then
		pass "$1"
	else
		fail "$1" "exit $rc, no /$2/ in: $(head -c 400 "$out") $(head -c 400 "$err")"
	fi
}

# refused NAME RAILS PATTERN: fi_info -p mrail fails with FI_MRAIL_RAILS=RAILS
# and the warning names the variable and matches PATTERN.
refused() {
	on 1 FI_MRAIL_RAILS="$2" fi_info -p mrail
	if [ "$rc" -ne 0 ] && grep -q 'FI_MRAIL_RAILS' "$err" && grep -qE -- "$3" "$err"; then
		pass "refuses $1"
	else
		fail "refuses $1" "exit $rc, stderr: $(head -c 600 "$err")"
	fi
	if grep -qiE 'sanitizer|runtime error' "$err"; then
		fail "refuses $1 cleanly" "$(head -c 600 "$err")"
	fi
}

# -- loading and listing
on 1 fi_info -l
expect_out "fi_info -l lists mrail" '^mrail:'

for h in 1 2; do
	on $h fi_info -p mrail
	expect_out "h$h: fi_info -p mrail shows both rails" 'domain: mr0\+mr1'
	on $h "$info_tool"
	if [ "$rc" -eq 0 ] && grep -qE "rail 0: tcp;ofi_rxm +mr0 +198\.18\.1\.$h port" "$out" &&
	   grep -qE "rail 1: tcp;ofi_rxm +mr1 +198\.18\.2\.$h port" "$out"; then
		pass "h$h: rails carry this host's addresses"
	else
		fail "h$h: rails carry this host's addresses" "$(cat "$out" "$err" | head -c 600)"
	fi
done

# -- fi_getinfo(node, service, FI_SOURCE), as fabtests' servers call it:
# any rail's address or interface binds every rail to the service.
for node in 198.18.1.1 198.18.2.1 mr0 mr1; do
	on 1 "$info_tool" -n $node -s 9228
	if [ "$rc" -eq 0 ] && grep -qE "rail 0: .*198\.18\.1\.1 port 9228" "$out" &&
	   grep -qE "rail 1: .*198\.18\.2\.1 port 9228" "$out"; then
		pass "FI_SOURCE node $node binds both rails to the service"
	else
		fail "FI_SOURCE node $node binds both rails to the service" "exit $rc: $(cat "$out" "$err" | head -c 600)"
	fi
done
for node in 198.18.1.2 127.0.0.1 lo; do
	on 1 "$info_tool" -n $node -s 9228
	if [ "$rc" -ne 0 ] && grep -q 'mrail offers no endpoint: No data available' "$err"; then
		pass "FI_SOURCE node $node (no rail of this host) gives -FI_ENODATA"
	else
		fail "FI_SOURCE node $node (no rail of this host) gives -FI_ENODATA" "exit $rc: $(cat "$out" "$err" | head -c 600)"
	fi
done

on 1 fi_info
expect_out "plain fi_info lists mrail with 2 discovered rails" 'provider: mrail'

on 1 fi_info -e
for param in $(grep -ho 'fi_param_define(&mrail_prov, "[a-z_0-9]*"' \
		"$here"/../../prov/multirail/src/*.c | sed 's/.*"\(.*\)"/\1/'); do
	name=FI_MRAIL_$(echo "$param" | tr a-z A-Z)
	if grep -q "$name" "$out"; then pass "fi_info -e lists $name"; else fail "fi_info -e lists $name" "missing"; fi
done

# -- every accepted form of FI_MRAIL_RAILS
on 2 FI_MRAIL_RAILS='tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr1' "$info_tool"
expect_out "interface names" 'rail 1: tcp;ofi_rxm +mr1 +198\.18\.2\.2 '
on 2 FI_MRAIL_RAILS='tcp;ofi_rxm@198.18.1.0/24,udp;ofi_rxd@198.18.2.0/24' "$info_tool"
expect_out "subnets with mixed tcp and udp stacks" 'rail 1: udp;ofi_rxd +mr1 +198\.18\.2\.2 '
on 2 FI_MRAIL_RAILS=' tcp;ofi_rxm@198.18.2.2 , tcp;ofi_rxm@198.18.1.2 ' "$info_tool"
expect_out "addresses, in the order given" 'rail 0: tcp;ofi_rxm +mr1 +198\.18\.2\.2 '
on 2 FI_MRAIL_RAILS='tcp;ofi_rxm@198.18.2.77/24,tcp;ofi_rxm@mr0' "$info_tool"
expect_out "subnet with host bits set" 'rail 0: tcp;ofi_rxm +mr1 +198\.18\.2\.2 '
on 2 FI_MRAIL_RAILS='tcp;ofi_rxm@lo,tcp;ofi_rxm@mr0' "$info_tool"
expect_out "an explicitly named loopback rail" 'rail 0: tcp;ofi_rxm +lo +127\.0\.0\.1 '

# mrail lists itself with one rail only when asked for by name.
on 1 FI_MRAIL_RAILS='tcp;ofi_rxm@mr0' fi_info -p mrail
expect_out "one rail, asked by name: listed" 'domain: mr0$'
on 1 FI_MRAIL_RAILS='tcp;ofi_rxm@mr0' fi_info -t FI_EP_RDM
if [ "$rc" -eq 0 ] && ! grep -q 'provider: mrail' "$out" && grep -q 'provider: tcp;ofi_rxm' "$out"; then
	pass "one rail, not asked by name: not listed"
else
	fail "one rail, not asked by name: not listed" "exit $rc: $(grep provider "$out" | sort | uniq -c)"
fi

# -- selection under FI_PROVIDER, and the private libfabric
on 1 FI_PROVIDER=mrail fi_info
expect_out "FI_PROVIDER=mrail selects mrail and still finds the rails" 'domain: mr0\+mr1'
on 1 FI_PROVIDER=mrail "$build/tests/integration/env_preserved"
expect_out "the private copy leaves the application's environment unchanged" 'variables unchanged'
on 1 FI_PROVIDER=mrail FI_MRAIL_PRIVATE_CORE=0 fi_info -p mrail
if [ "$rc" -ne 0 ]; then pass "without the private copy FI_PROVIDER=mrail hides the rails"; else fail "without the private copy FI_PROVIDER=mrail hides the rails" "mrail listed"; fi
on 1 FI_MRAIL_PRIVATE_CORE=0 fi_info -p mrail
expect_out "application's libfabric as rail library (no recursion)" 'domain: mr0\+mr1'
on 1 FI_MRAIL_PRIVATE_CORE=0 FI_PROVIDER=mrail,tcp,ofi_rxm fi_info -p mrail
expect_out "application's libfabric with the rails allowed" 'domain: mr0\+mr1'

# -- requests mrail declines at once, without opening rails
for type in FI_EP_MSG FI_EP_DGRAM; do
	on 1 FI_LOG_LEVEL=info fi_info -p mrail -t $type
	if [ "$rc" -ne 0 ] && ! grep -q 'mrail:core.*rails open' "$err"; then
		pass "$type declined without touching rails"
	else
		fail "$type declined without touching rails" "exit $rc"
	fi
done
on 1 fi_info -p 'tcp;ofi_rxm' -t FI_EP_RDM
expect_out "ofi_rxm over tcp still works with mrail loaded" 'provider: tcp;ofi_rxm'
on 1 fi_info -p 'udp;ofi_rxd'
expect_out "ofi_rxd over udp still works with mrail loaded" 'provider: udp;ofi_rxd'

# -- every invalid FI_MRAIL_RAILS
refused "an empty list" '' 'empty'
refused "a blank list" '   ' 'empty'
refused "an empty rail" 'tcp;ofi_rxm@mr0,,tcp;ofi_rxm@mr1' 'rail 2'
refused "a missing @" 'tcp;ofi_rxm' "@"
refused "an empty stack" '@mr0' 'rail 1'
refused "a malformed stack" 'tcp;;ofi_rxm@mr0' 'tcp;;ofi_rxm'
refused "an unknown provider" 'nosuch;ofi_rxm@mr0' 'nosuch;ofi_rxm.*unknown'
refused "a missing interface" 'tcp;ofi_rxm@mr7' 'mr7'
refused "an absent address" 'tcp;ofi_rxm@198.18.9.1' '198\.18\.9\.1'
refused "an absent subnet" 'tcp;ofi_rxm@198.18.9.0/24' '198\.18\.9\.0/24'
refused "a mistyped address" 'tcp;ofi_rxm@198.18.1.300' '198\.18\.1\.300.*not a valid IPv4'
refused "a bad prefix length" 'tcp;ofi_rxm@198.18.1.0/33' '33'
refused "a duplicate rail" 'tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr0' 'rail 2.*(duplicate|same|twice)|(duplicate|same|twice).*rail 2'
refused "two spellings of one port" 'tcp;ofi_rxm@mr0,tcp;ofi_rxm@198.18.1.0/24' 'rails 1 and 2 both resolve to tcp;ofi_rxm@mr0'
nine=$(printf 'tcp;ofi_rxm@198.18.1.%d,' 1 2 3 4 5 6 7 8 9); nine=${nine%,}
refused "more rails than supported" "$nine" '8'
# A link that is down is a failed rail, not a mistake: mrail is offered
# with both rails, and the warning names the interface.
"$testbed" exec 1 ip link set mr1 down
on 1 FI_MRAIL_RAILS='tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr1' fi_info -p mrail
if [ "$rc" -eq 0 ] && grep -q 'domain: mr0+mr1' "$out" &&
   grep -q 'rail 2 .*interface mr1 (198.18.2.1) is down: the rail starts failed' "$err"; then
	pass "an interface that is down: both rails offered, the rail starts failed"
else
	fail "an interface that is down: both rails offered, the rail starts failed" \
		"exit $rc, stderr: $(head -c 600 "$err")"
fi
"$testbed" exec 1 ip link set mr1 up

rm -f "$out" "$err"
finish
