#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The benchmarks run and report, briefly, between two emulated hosts over
# mrail with 2 tcp;ofi_rxm rails: fi_mrail_pingpong and fi_mrail_bw, with
# messages and tagged messages (also as the by-hand baseline, -R, over
# several endpoints), must finish and print one parseable RESULT
# line per size, with a half round trip and a bandwidth above zero. A size
# above the provider's max_msg_size must be reported, measured or skipped.
# The text and csv outputs parse too, and two sides started with different
# options refuse to run. RMA writes (-r) run and have their data checked by
# the server; -i prints interval lines. Correctness only: no figure is compared with
# anything (ci/bench measures).
#
# Needs MRAIL_BUILD; MRAIL_PRELOAD is preloaded into programs that load mrail.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

require_root
build=${MRAIL_BUILD:?set MRAIL_BUILD to a built tree}
testbed=$here/../../ci/testbed
bw_tool=$build/fabtests-ext/fi_mrail_bw
pp_tool=$build/fabtests-ext/fi_mrail_pingpong
rails='tcp;ofi_rxm@mr0,tcp;ofi_rxm@mr1'
port=47610
logs=$(mktemp -d)

testbed_cleanup_on_exit

# pair NAME TOOL ARGS...: the tool's server on h1 and client on h2 over
# mrail's two rails, both with ARGS unless the array server_args holds the
# server's; output in $logs/NAME.{server,client}, the client's stderr (with
# libfabric's warnings) in $logs/NAME.client.err, statuses in $srv, $cli.
server_args=()
pair() {
	local name=$1 tool=$2
	shift 2
	local sargs=("$@")
	local run=(env FI_PROVIDER_PATH="$build/.libs" LD_PRELOAD="${MRAIL_PRELOAD:-}"
		   FI_LOG_LEVEL=warn FI_MRAIL_RAILS="$rails")

	[ ${#server_args[@]} -gt 0 ] && sargs=("${server_args[@]}")
	port=$((port + 1))
	timeout 120 "$testbed" exec 1 "${run[@]}" "$tool" -p mrail -E $port \
		"${sargs[@]}" >"$logs/$name.server" 2>&1 &
	srv=$!
	timeout 120 "$testbed" exec 2 "${run[@]}" "$tool" -p mrail -E $port \
		"$@" 198.18.1.1 >"$logs/$name.client" 2>"$logs/$name.client.err"
	cli=$?
	wait $srv
	srv=$?
}

# what_happened NAME: the first lines a pair printed, libfabric's warnings
# left out, for a failure message.
what_happened() {
	cat "$logs/$1.client" "$logs/$1.client.err" "$logs/$1.server" 2>/dev/null |
		grep -v '<warn>' | head -4 | paste -sd ';' -
}

# results FILE KEY SIZES...: succeeds if FILE has, for each size, one
# RESULT line that is either status=ok with KEY a number above zero, or
# (for sizes above max_msg_size) status=skipped; prints what is wrong.
results() {
	local file=$1 key=$2
	shift 2
	awk -v key="$key" -v want="$*" '
		$1 == "RESULT" {
			split("", f)
			for (i = 2; i <= NF; i++) {
				eq = index($i, "=")
				if (eq < 2) { print "not key=value: " $i; bad = 1; next }
				f[substr($i, 1, eq - 1)] = substr($i, eq + 1)
			}
			size = f["size"]
			seen[size]++
			if (f["status"] == "skipped") {
				if (size + 0 <= f["max_msg_size"] + 0) {
					print "size " size " skipped below max_msg_size " f["max_msg_size"]
					bad = 1
				}
				skipped[size] = 1
			} else if (f["status"] != "ok" || f[key] !~ /^[0-9.]+$/ || f[key] + 0 <= 0) {
				print "size " size ": status " f["status"] ", " key " \"" f[key] "\""
				bad = 1
			}
		}
		END {
			n = split(want, sizes, " ")
			for (i = 1; i <= n; i++)
				if (seen[sizes[i]] != 1) {
					print "size " sizes[i] ": " (seen[sizes[i]] + 0) " RESULT lines"
					bad = 1
				}
			exit bad
		}' "$file"
}

# run_check NAME TOOL KEY SIZES ARGS...: a pair whose client must report
# every size in SIZES (bytes, comma-separated as -S takes them).
run_check() {
	local name=$1 tool=$2 key=$3 sizes=$4 why out
	shift 4
	out=$(printf '%s' "$name" | tr -c 'A-Za-z0-9' '_')
	pair "$out" "$tool" -o kv -S "$sizes" "$@"
	if [ $srv -ne 0 ] || [ $cli -ne 0 ]; then
		fail "$name" "server exit $srv, client exit $cli: $(what_happened "$out")"
	elif why=$(results "$logs/$out.client" "$key" "${sizes//,/ }"); then
		pass "$name: $(grep -c '^RESULT .*status=ok' "$logs/$out.client") measured, $(
			grep -c '^RESULT .*status=skipped' "$logs/$out.client") skipped"
	else
		fail "$name" "$(echo "$why" | head -4 | paste -sd ';' -)"
	fi
}

"$testbed" up --hosts 2 --rails 2 >/dev/null || fail testbed "up failed"

run_check "pingpong, messages, 2 rails" "$pp_tool" median_us 0,8,4096,16384 -n 20 -w 2
run_check "pingpong, tagged, 2 rails, 64 KiB measured or skipped" "$pp_tool" mean_us \
	8,65536 -T -n 20 -w 2
# -B: both sides send at once every round; each keeps two receives
# posted, so a round whose message came before its receive would still
# complete, but one lost or matched to the wrong receive hangs the run.
run_check "pingpong, bidirectional (-B), tagged, 2 rails" "$pp_tool" median_us \
	8,4096,65536 -B -T -n 50 -w 2
run_check "bw, messages, 2 rails" "$bw_tool" gbit_per_s 8,16384 -n 200 -W 16 -w 4
run_check "bw, tagged, 2 rails, 1 MiB measured or skipped" "$bw_tool" gbit_per_s \
	16384,1048576 -T -n 40 -W 8 -w 2

# -R N, the by-hand baseline: the bare core stack's N endpoints, the data
# messages on each in turn; every completion is counted, so a message that
# went to an endpoint whose peer had no receive posted would hang the run.
run_check "pingpong, tagged, bare core by hand over 2 endpoints (-R 2)" "$pp_tool" \
	median_us 8,4096 -T -n 20 -w 2 -p 'tcp;ofi_rxm' -R 2
run_check "bw, messages, bare core by hand over 3 endpoints (-R 3)" "$bw_tool" \
	gbit_per_s 8,65536 -n 200 -W 16 -w 4 -p 'tcp;ofi_rxm' -R 3
run_check "bw, tagged, mrail by hand over 2 endpoints (-R 2)" "$bw_tool" \
	gbit_per_s 16384 -T -n 200 -W 16 -w 4 -R 2

# RMA writes (-r): the server checks every slot written, so a run that
# passes moved the data; an odd size and one above the inline limit.
run_check "bw, RMA writes, 2 rails, data checked" "$bw_tool" gbit_per_s \
	12345,1048576 -r -n 40 -W 8 -w 2
if [ $srv -eq 0 ] && [ $cli -eq 0 ] &&
   [ "$(grep -c '^RESULT .*mode=write .*status=ok data=checked' "$logs/bw__RMA_writes__2_rails__data_checked.client")" -eq 2 ]; then
	pass "bw -r reports mode=write and data=checked for both sizes"
else
	fail "bw -r report" "$(what_happened bw__RMA_writes__2_rails__data_checked)"
fi

# -i: interval lines "T_MS GBIT" after a "#" line with the start time.
# 10 ms intervals: the 300 MiB stream can take as little as 0.1 s over the
# unshaped rails, and two lines are asked for.
pair bw_interval "$bw_tool" -T -S 1m -n 300 -W 16 -w 2 -i 10 -I "$logs/ticks" -o kv
if [ $cli -eq 0 ] && [ $srv -eq 0 ] && awk '
	NR == 1 { ok = /^# fi_mrail_bw mrail tagged size=1048576 interval_ms=10 start_realtime=[0-9.]+$/; next }
	NF != 2 || $1 !~ /^[0-9.]+$/ || $2 !~ /^[0-9.]+$/ || $1 + 0 <= last { ok = 0 }
	{ last = $1 + 0; n++ }
	END { exit !(ok && n >= 2) }' "$logs/ticks"; then
	pass "bw -i: $(($(wc -l <"$logs/ticks") - 1)) interval lines in time order"
else
	fail "bw -i" "server exit $srv, client exit $cli: $(head -3 "$logs/ticks" 2>/dev/null | paste -sd ';' -); $(what_happened bw_interval)"
fi

# Writes are not tagged: a clear refusal, before any connection.
if "$bw_tool" -r -T 198.18.1.1 2>"$logs/rT.err"; then
	fail "bw -r -T" "accepted"
elif grep -q 'not tagged' "$logs/rT.err"; then
	pass "bw -r -T refused: $(head -1 "$logs/rT.err")"
else
	fail "bw -r -T" "$(head -2 "$logs/rT.err" | paste -sd ';' -)"
fi

# The by-hand baseline covers messages only, and at most 8 endpoints.
for bad in "-r -R 2" "-R 9" "-R 0"; do
	# shellcheck disable=SC2086 # the options are meant to split
	if "$bw_tool" $bad 198.18.1.1 2>"$logs/R.err"; then
		fail "bw $bad" "accepted"
	elif grep -q -- '-R' "$logs/R.err"; then
		pass "bw $bad refused: $(head -1 "$logs/R.err")"
	else
		fail "bw $bad" "$(head -2 "$logs/R.err" | paste -sd ';' -)"
	fi
done

# The text line ci/main-job reads, and csv with a row per size under a header.
pair bw_text "$bw_tool" -S 16k -n 100
if [ $cli -eq 0 ] && [ $srv -eq 0 ] &&
   grep -qE '^fi_mrail_bw: mrail msg 16384 x 100: [0-9.]+ Gbit/s' "$logs/bw_text.client"; then
	pass "bw text output: $(sed 's/^fi_mrail_bw: //' "$logs/bw_text.client")"
else
	fail "bw text output" "server exit $srv, client exit $cli: $(what_happened bw_text)"
fi
pair pingpong_csv "$pp_tool" -o csv -S 8,1k -n 10
if [ $cli -eq 0 ] && [ $srv -eq 0 ] && awk -F, '
	NR == 1 { n = NF; ok = $1 == "tool" && $5 == "iters"; next }
	NF != n || $11 != "ok" { ok = 0 }
	END { exit !(ok && NR == 3) }' "$logs/pingpong_csv.client"; then
	pass "pingpong csv output: a header and 2 rows"
else
	fail "pingpong csv output" "server exit $srv, client exit $cli: $(what_happened pingpong_csv)"
fi

# Two sides out of step would hang or measure nonsense; they must refuse.
server_args=(-S 8 -n 10)
pair mismatch "$pp_tool" -S 16 -n 10
server_args=()
if [ $cli -ne 0 ] && [ $srv -ne 0 ] && grep -q 'other options' "$logs/mismatch.client.err"; then
	pass "sides started with different options both refuse"
else
	fail "options mismatch" "server exit $srv, client exit $cli: $(what_happened mismatch)"
fi

rm -rf "$logs"
finish
