#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The build system as a user meets it: configure's message when libfabric is
# missing, where make install puts the provider for libfabric's own prefix and
# for any other, and that libfabric loads it from there.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/integration/lib.sh
. "$here/lib.sh"

top=$(cd "$here/../.." && pwd)
[ -x "$top/configure" ] || { fail setup "run ./autogen.sh first"; finish; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# -- a missing libfabric is named, with what to install
mkdir "$work/nofabric"
(cd "$work/nofabric" && PKG_CONFIG_LIBDIR=/nonexistent "$top/configure" >out 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -q 'libfabric >= 1.17' "$work/nofabric/out" &&
   grep -q 'apt-get install libfabric-dev' "$work/nofabric/out"; then
	pass "configure names a missing libfabric and the package to install"
else
	fail "configure names a missing libfabric and the package to install" \
		"exit $rc: $(tail -n 5 "$work/nofabric/out")"
fi

# install_to NAME CONFIGURE-ARGS...: configure, build and install into
# $work/NAME/root (DESTDIR); nothing reaches the real system.
install_to() {
	local name=$1; shift
	mkdir -p "$work/$name"
	(cd "$work/$name" && "$top/configure" --quiet "$@" >log 2>&1 &&
		make -j"$(nproc)" >>log 2>&1 &&
		make install DESTDIR="$work/$name/root" >>log 2>&1)
}

# -- --prefix=/usr follows libfabric's (multiarch) libdir
fabric_provdir=$(pkg-config --variable=libdir libfabric)/libfabric
if install_to usr --prefix=/usr; then
	so=$work/usr/root$fabric_provdir/libmrail-fi.so
	if [ -f "$so" ] && [ ! -e "${so%.so}.la" ]; then
		pass "--prefix=/usr installs into libfabric's provider dir $fabric_provdir"
	else
		fail "--prefix=/usr installs into $fabric_provdir" \
			"$(cd "$work/usr/root" && find . -name 'libmrail*')"
	fi
	nm -D --defined-only "$so" | awk '{print $3}' >"$work/exports"
	if [ "$(cat "$work/exports")" = fi_prov_ini ]; then
		pass "the provider exports only fi_prov_ini"
	else
		fail "the provider exports only fi_prov_ini" "$(tr '\n' ' ' <"$work/exports")"
	fi
else
	fail "--prefix=/usr builds and installs" "$(tail -n 20 "$work/usr/log")"
fi

# -- any other prefix: <libdir>/libfabric, found through FI_PROVIDER_PATH
if install_to opt --prefix=/opt/mrail-test; then
	dir=$work/opt/root/opt/mrail-test/lib/libfabric
	if [ -f "$dir/libmrail-fi.so" ]; then
		pass "--prefix=/opt/mrail-test installs into <libdir>/libfabric"
	else
		fail "--prefix=/opt/mrail-test installs into <libdir>/libfabric" \
			"$(cd "$work/opt/root" && find . -name 'libmrail*')"
	fi
	if FI_PROVIDER_PATH=$dir LD_PRELOAD="${MRAIL_PRELOAD:-}" fi_info -l 2>/dev/null |
	   grep -q '^mrail:'; then
		pass "libfabric loads the installed provider from FI_PROVIDER_PATH"
	else
		fail "libfabric loads the installed provider from FI_PROVIDER_PATH" "not listed"
	fi
	for page in man7/fi_mrail.7 man1/fi_mrail_info.1; do
		if [ -f "$work/opt/root/opt/mrail-test/share/man/$page" ]; then
			pass "installs $page"
		else
			fail "installs $page" "missing"
		fi
	done
	(cd "$work/opt" && make uninstall DESTDIR="$work/opt/root" >>log 2>&1)
	left=$(find "$work/opt/root" -type f | sed "s|$work/opt/root||")
	if [ -z "$left" ]; then
		pass "make uninstall removes everything it installed"
	else
		fail "make uninstall removes everything it installed" "$left"
	fi
else
	fail "--prefix=/opt/mrail-test builds and installs" "$(tail -n 20 "$work/opt/log")"
fi

finish
