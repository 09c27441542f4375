#!/bin/bash
# A peer that dies gives errors, never a hang: fi_mrail_peerdeath with
# FI_MRAIL_PEER_TIMEOUT=3 between two emulated hosts (a live peer silent for
# 6 s is not taken for dead; a rendezvous in flight to a peer that exits
# fails with FI_EHOSTUNREACH; later sends to it, and to a peer never reached,
# fail with -FI_EHOSTUNREACH), with manual progress on 2 tcp rails; and a
# bad FI_MRAIL_PEER_TIMEOUT fails fi_getinfo with a warning naming it.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
tool=$build/fabtests-ext/fi_mrail_peerdeath
port=47640

testbed_cleanup_on_exit

"$TESTBED" up --hosts 2 --rails 2 >/dev/null || fail testbed "up failed"
FI_MRAIL_PEER_TIMEOUT=3 run_pair "peer death, 2 tcp rails" 120 \
	'tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr1' "$tool" -E $port

log=$TEST_LOGDIR/bad-peer-timeout.log
"$TESTBED" exec 1 env FI_PROVIDER_PATH="$build/.libs" LD_PRELOAD="${MRAIL_PRELOAD:-}" \
	FI_LOG_LEVEL=warn FI_MRAIL_PEER_TIMEOUT=3s fi_info -p mrail >"$log" 2>&1
if grep -q "provider: mrail" "$log"; then
	fail "bad FI_MRAIL_PEER_TIMEOUT" "fi_info still lists mrail"
elif ! grep -qF "FI_MRAIL_PEER_TIMEOUT: '3s' is not a whole number of seconds" "$log"; then
	fail "bad FI_MRAIL_PEER_TIMEOUT" "no warning naming it: $(grep -i mrail "$log" | head -3)"
else
	pass "bad FI_MRAIL_PEER_TIMEOUT: fi_getinfo fails, the warning names it"
fi

finish
