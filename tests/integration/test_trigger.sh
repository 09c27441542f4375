#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Triggered operations and deferred work across two emulated hosts:
# fi_mrail_trigger (thresholds, threshold order, chains of writes, sends,
# atomics and reads, FI_INJECT, errors, cancel, a triggered receive, a reply
# fired by the server's receive counter, FI_QUEUE_WORK / FI_CANCEL_WORK /
# FI_FLUSH_WORK) with manual progress and with FI_PROGRESS_AUTO (where the
# server makes no libfabric call while its reply fires), on 2 tcp rails and
# on tcp + udp rails.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
tool=$build/fabtests-ext/fi_mrail_trigger
port=47630

testbed_cleanup_on_exit

pair() { # name rails limit [tool options]
	local name=$1 rails=$2 limit=$3
	shift 3
	run_pair "$name" "$limit" "$rails" "$tool" -E $port "$@"
}

"$TESTBED" up --hosts 2 --rails 2 >/dev/null || fail testbed "up failed"
pair "triggered operations, 2 tcp rails" 'tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr1' 120
pair "triggered operations, 2 tcp rails, FI_PROGRESS_AUTO" \
	'tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr1' 120 -a
# ofi_rxd crawls on a busy machine (see test_msg.sh): more time.
pair "triggered operations, tcp + udp rails, FI_PROGRESS_AUTO" \
	'tcp;ofi_rxm@mr0,udp;ofi_rxd@mr1' 300 -a

finish
