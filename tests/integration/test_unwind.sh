#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Error unwinding in mrail's open paths, by failure injection: each case of
# fi_mrail_unwind runs with tests/integration/libmrail_fault.so preloaded
# and the rails opened through the application's libfabric
# (FI_MRAIL_PRIVATE_CORE=0, so that the preloaded shim sees mrail's core
# calls), and one step of an open fails: the last rail's fabric, domain, AV,
# memory registration, or endpoint or CQ in fi_enable (-FI_ENOSPC), or
# mrail's own eventfd for an FI_PROGRESS_AUTO domain's progress thread and
# for FI_WAIT_FD CQs, counters and EQs (EMFILE). Each must return that
# error, leave as many fds open and as many heap bytes in use as before
# (glibc's tcache off, so that freed memory counts as free; under ASan
# its allocator counts), log a warning naming what failed, and work when
# opened again; a retried AV and endpoint carry a message byte for byte.
# Like test_objs.sh it needs no
# peer: a private network namespace with two ports, mo0 and mo1, runs
# each case, on two tcp;ofi_rxm rails and on tcp;ofi_rxm + udp;ofi_rxd.
#
# Needs MRAIL_BUILD; MRAIL_PRELOAD is preloaded into programs that load mrail.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
# A case that hangs is ended well before the suite's own limits.
export IN_NETNS_TIMEOUT=120
prog=$build/fabtests-ext/fi_mrail_unwind
shim=$build/tests/integration/.libs/libmrail_fault.so
out=$(mktemp) err=$(mktemp)

if [ ! -x "$prog" ] || [ ! -f "$shim" ]; then
	fail "$TEST_NAME" "$prog or $shim is not built"
	finish
fi

# unwind NAME RAILS CASE WARNING: fi_mrail_unwind -t CASE over RAILS; passes
# when every check passed and stderr holds WARNING (an extended regex).
unwind() {
	local name=$1 rails=$2 case=$3 warning=$4
	in_netns env FI_PROVIDER_PATH="$build/.libs" FI_MRAIL_PRIVATE_CORE=0 \
		LD_PRELOAD="${MRAIL_PRELOAD:-} $shim" \
		GLIBC_TUNABLES=glibc.malloc.tcache_count=0 \
		FI_LOG_LEVEL=warn FI_MRAIL_RAILS="$rails" "$prog" -t "$case" \
		>"$out" 2>"$err"
	rc=$?
	if [ $rc -eq 0 ] && grep -qE '^fi_mrail_unwind: ([0-9]+) of \1 checks passed' "$out" &&
	   grep -qE "$warning" "$err"; then
		pass "$name: $case: $(tail -n 1 "$out" | sed 's/fi_mrail_unwind: //'); warned: $(grep -oE "$warning" "$err" | head -n 1)"
	else
		fail "$name: $case" "exit $rc: $(grep -E 'FAILED|checks' "$out" | head -6) $(grep -vE 'fi_getinfo' "$err" | head -4)"
	fi
}

suite() {
	local name=$1 rails=$2
	unwind "$name" "$rails" fabric 'rail 2 \(.*\): cannot open its fabric'
	unwind "$name" "$rails" domain 'rail 2 \(.*\): cannot open its domain'
	unwind "$name" "$rails" progress 'cannot start the progress thread'
	unwind "$name" "$rails" av 'rail 2 \(.*\): cannot open its AV'
	unwind "$name" "$rails" named_av 'rail 2 \(.*\): cannot open its AV'
	unwind "$name" "$rails" cq "cannot create the CQ's wait object"
	unwind "$name" "$rails" cntr "cannot create the counter's wait object"
	unwind "$name" "$rails" eq "cannot create the EQ's wait object"
	unwind "$name" "$rails" mr 'rail 2 \(.*\): cannot register'
	unwind "$name" "$rails" enable 'rail 2 \(.*\): cannot enable its endpoint'
	unwind "$name" "$rails" enable_ep 'rail 2 \(.*\): cannot enable its endpoint'
}

suite "2 tcp rails" 'tcp;ofi_rxm@mo0,tcp;ofi_rxm@mo1'
suite "tcp + udp rails" 'tcp;ofi_rxm@mo0,udp;ofi_rxd@mo1'

rm -f "$out" "$err"
finish
