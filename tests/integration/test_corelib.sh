#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# mrail's private libfabric (mrail_corelib.c) is the very file the
# application loaded, not the first libfabric.so.1 on the search path, with
# two libfabrics installed: Debian's (the search path finds it) and a 2.x
# in a private prefix (ci/libfabric2 builds it into build-lf2/install).
# tests/integration/corelib_probe loads each of them by its path, asks for
# mrail, and lists the libfabric files the process has mapped; mrail's log
# names the file of its private copy.
#
# Needs MRAIL_BUILD (a built tree) and the second libfabric: MRAIL_LF2_PREFIX
# (default build-lf2/install); without it the test says so and checks
# nothing.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
provider_dir=$build/.libs
probe=$build/tests/integration/corelib_probe
lf2_prefix=${MRAIL_LF2_PREFIX:-$TOP/build-lf2/install}
require_built "$probe"

system_lib=$(ldconfig -p | awk '$1 == "libfabric.so.1" { print $NF; exit }')
other_lib=$lf2_prefix/lib/libfabric.so.1
if [ -z "$system_lib" ] || [ ! -f "$other_lib" ]; then
	note "two libfabrics are needed (the search path's: '${system_lib:-none}'," \
		"and $other_lib): run ci/libfabric2 --build-only; nothing checked"
	finish
fi
[ "$(readlink -f "$system_lib")" != "$(readlink -f "$other_lib")" ] ||
	{ fail setup "$system_lib and $other_lib are the same file"; finish; }

testbed_cleanup_on_exit
"$TESTBED" up --hosts 2 --rails 2 >/dev/null || { fail setup "testbed up failed"; finish; }

# The API version of the headers a libfabric was installed with.
lib_api() { # libfabric.so path
	local inc
	inc=$(dirname "$(dirname "$1")")/include
	[ "$1" = "$system_lib" ] && inc=/usr/include
	awk '/define FI_MAJOR_VERSION/ { M = $3 } /define FI_MINOR_VERSION/ { m = $3 }
	     END { print M * 65536 + m }' "$inc/rdma/fabric.h"
}
# The API version mrail registers with: its build's headers'.
mrail_api=$(awk '/^FABRIC_CFLAGS = / { for (i = 3; i <= NF; i++) if ($i ~ /^-I/) print substr($i, 3) }' \
	"$build/Makefile" | head -n 1)
mrail_api=$(awk '/define FI_MAJOR_VERSION/ { M = $3 } /define FI_MINOR_VERSION/ { m = $3 }
	END { print M * 65536 + m }' "${mrail_api:-/usr/include}/rdma/fabric.h")

probed=0
for lib in "$system_lib" "$other_lib"; do
	# A library older than mrail's API does not offer it (fi_version(3)).
	if [ "$(lib_api "$lib")" -lt "$mrail_api" ]; then
		note "$lib is older than the API mrail was built for: not probed"
		continue
	fi
	probed=$((probed + 1))
	name="private copy is the application's $lib"
	log=$TEST_LOGDIR/probe-$probed.log
	"$TESTBED" exec 1 env FI_PROVIDER=mrail FI_PROVIDER_PATH="$provider_dir" \
		FI_MRAIL_RAILS='tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr1' FI_LOG_LEVEL=info \
		LD_PRELOAD="${MRAIL_PRELOAD:-}" "$probe" "$lib" >"$log" 2>&1
	rc=$?
	want=$(readlink -f "$lib")
	copy=$(sed -n 's/.*rails open through a private copy of \(.*\)$/\1/p' "$log" | head -n 1)
	mapped=$(sed -n 's/^mapped: //p' "$log" | sort -u)
	others=$(grep -vxF "$want" <<<"$mapped")
	if [ $rc -ne 0 ]; then
		fail "$name" "corelib_probe exited $rc (log $log)"
		show_log_tail "$log"
	elif [ -n "$others" ]; then
		fail "$name" "another libfabric is mapped too: $others"
	elif [ -z "$copy" ] || [ "$(readlink -f "$copy")" != "$want" ]; then
		fail "$name" "mrail's private copy is '${copy:-not logged}', want $want"
	else
		pass "$name"
	fi
done
[ $probed -gt 0 ] || fail "probe" "neither libfabric is recent enough for this mrail build"
finish
