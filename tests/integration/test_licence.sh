#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The licence is stated where a reader or a licence scanner looks for it:
# COPYING holds the BSD 2-Clause text, and every source file of the tree
# (C sources and headers, scripts, build files, man pages, CI data) names it
# with an SPDX line among its first three lines. Comments cite the papers
# mrail comes from by author and year, never by the seed files' numbers,
# which mean nothing outside the team.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

top=$(cd "$here/../.." && pwd)
tag='SPDX-License-Identifier: BSD-2-Clause'

if grep -q 'BSD 2-Clause License' "$top/COPYING" 2>/dev/null &&
   grep -q 'Redistributions in binary form must reproduce' "$top/COPYING"; then
	pass "COPYING holds the BSD 2-Clause licence"
else
	fail "COPYING" "missing, or without the BSD 2-Clause text"
fi

# The tracked files when this is a git checkout, else what a distribution
# unpacks: the same files.
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	files=$(git -C "$top" ls-files)
else
	files=$(cd "$top" && find . -path ./build -prune -o -type f -print | sed 's|^\./||')
fi
sources=$(echo "$files" | grep -E '\.(c|h|sh|1|7|am|ac|supp)$|^ci/|^\.ci/|^autogen\.sh$' |
	  grep -vE '(^|/)Makefile\.in$|^configure$|^aclocal\.m4$|^build-aux/|^m4/|^autom4te')
count=0
missing=()
while read -r f; do
	[ -n "$f" ] || continue
	count=$((count + 1))
	head -n 3 "$top/$f" | grep -qF "$tag" || missing+=("$f")
done <<<"$sources"
if [ "$count" -lt 100 ]; then
	fail "SPDX lines" "only $count source files found under $top"
elif [ ${#missing[@]} -eq 0 ]; then
	pass "all $count source files name BSD-2-Clause in an SPDX line"
else
	fail "SPDX lines" "${#missing[@]} of $count files lack one: ${missing[*]:0:8}"
fi

cited=$(cd "$top" && echo "$sources" | xargs grep -ln 'seed 00[0-9]' 2>/dev/null)
if [ -z "$cited" ]; then
	pass "no source cites a paper by its seed number"
else
	fail "paper citations" "by seed number in: $(echo "$cited" | paste -sd ' ' -)"
fi

finish
