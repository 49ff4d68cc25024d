#!/bin/sh
# make deb: a Debian package of what make install puts in place, that
# lintian passes, that unpacks and runs, and that apt-get installs and
# removes again (as root, on a machine without beamscope installed).
. "$(dirname "$0")/lib.sh"

command -v dpkg-deb >/dev/null || test_skip_all "no dpkg-deb: not a Debian system"

VERSION=$(sed -n 's/^VERSION := //p' "$TOP/Makefile")
ARCH=$(dpkg --print-architecture)
DEB=$BUILD/beamscope_$VERSION-1_$ARCH.deb
FILES="usr/bin/beamscope
usr/share/man/man1/beamscope.1.gz
usr/share/bash-completion/completions/beamscope
usr/share/zsh/vendor-completions/_beamscope
usr/share/fish/vendor_completions.d/beamscope.fish
usr/share/doc/beamscope/copyright
usr/share/doc/beamscope/changelog.Debian.gz
usr/share/lintian/overrides/beamscope"
VERSION_LINE="^beamscope [0-9.]* (built against OTP $OTP_RELEASE; targets need OTP [0-9]* or newer)\$"

# the build is done: a make of our own, not a part of the caller's
mk() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$TOP" BUILD="$BUILD" "$@"
}

# test_skip DESC REASON: a test that cannot run here, said so in TAP
test_skip() {
	test_count=$((test_count + 1))
	printf 'ok %d - %s # SKIP %s\n' "$test_count" "$1" "$2"
}

# installed: dpkg's status of beamscope, empty when it has none (a purged
# package can stay known as not-installed)
installed() {
	dpkg-query -W -f='${Status}' beamscope 2>/dev/null | grep -v 'not-installed$'
}

# a test that fails halfway must not leave its package on the machine
purge_ours() {
	[ -f "$TRASH/apt-installed" ] && [ -n "$(installed)" ] &&
		dpkg --purge beamscope >/dev/null 2>&1
	return 0
}
trap 'purge_ours; cleanup' EXIT

test_expect_success 'make deb builds the package with every file, owned by root' '
	mk deb >made && cat made &&
	expect "$(tail -n 1 made)" = "$DEB" &&
	dpkg-deb -c "$DEB" >contents && cat contents &&
	grep -v "^d" contents | awk "{ print \$6 }" | sed "s|^\./||" | sort >files &&
	printf "%s\n" $FILES | sort >want && diff -u want files &&
	awk "\$2 != \"root/root\"" contents >notroot &&
	expect "$(cat notroot)" = "" &&
	expect "$(grep " ./usr/bin/beamscope\$" contents | cut -c1-10)" = -rwxr-xr-x &&
	grep -v "^d" contents | grep -v " ./usr/bin/beamscope\$" | cut -c1-10 | sort -u >modes &&
	expect "$(cat modes)" = -rw-r--r-- &&
	grep "^d" contents | cut -c1-10 | sort -u >dmodes &&
	expect "$(cat dmodes)" = drwxr-xr-x
'

test_expect_success 'the control file names the package, its version, arch and libraries' '
	expect "$(dpkg-deb -f "$DEB" Package)" = beamscope &&
	expect "$(dpkg-deb -f "$DEB" Version)" = "$VERSION-1" &&
	expect "$(dpkg-deb -f "$DEB" Architecture)" = "$ARCH" &&
	expect "$(dpkg-deb -f "$DEB" Section)" = devel &&
	dpkg-deb -f "$DEB" Depends >depends && cat depends &&
	for lib in libc6 libcjson1 libncursesw6 libreadline8; do
		grep -q "\\(^\\|, \\)$lib\\( \\|,\\|\$\\)" depends ||
			{ echo "Depends lacks $lib"; exit 1; }
	done
'

if command -v lintian >/dev/null; then
	# warnings fail as errors do: the package has none, a new one is news
	test_expect_success 'lintian finds no error and no warning' '
		lintian "$DEB" >lintian.out 2>&1
		rc=$?
		cat lintian.out &&
		grep "^[EW]: " lintian.out >bad
		expect "$(cat bad)" = "" && expect "$rc" -eq 0
	'
else
	test_skip 'lintian finds no error and no warning' 'no lintian: run scripts/setup'
fi

test_expect_success 'the package unpacks, and its binary runs' '
	dpkg-deb -x "$DEB" root &&
	root/usr/bin/beamscope --version >v && cat v &&
	grep -q "$VERSION_LINE" v &&
	gzip -dc root/usr/share/man/man1/beamscope.1.gz | cmp - "$TOP/man/beamscope.1" &&
	cmp "$TOP/completions/beamscope.fish" root/usr/share/fish/vendor_completions.d/beamscope.fish &&
	gzip -dc root/usr/share/doc/beamscope/changelog.Debian.gz >changelog && cat changelog &&
	expect "$(head -n 1 changelog)" = "beamscope ($VERSION-1) unstable; urgency=medium" &&
	grep -q "^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\$" \
		root/usr/share/doc/beamscope/copyright
'

# apt-get on the real machine: only where it is ours to change, and undone
why=""
[ "$(id -u)" -eq 0 ] || why="not root"
command -v apt-get >/dev/null || why="no apt-get"
[ -z "$why" ] && [ -n "$(installed)" ] && why="a beamscope package is installed: $(installed)"
[ -z "$why" ] && [ -e /usr/bin/beamscope ] && why="/usr/bin/beamscope is there already"
if [ -z "$why" ]; then
	test_expect_success 'apt-get install ./beamscope_*.deb installs it, and it runs' '
		: >"$TRASH/apt-installed" &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=120 \
			"$DEB" >apt.out 2>&1
		rc=$?
		cat apt.out
		expect "$rc" -eq 0 &&
		expect "$(installed)" = "install ok installed" &&
		expect "$(dpkg-query -W -f="\${Version}" beamscope)" = "$VERSION-1" &&
		/usr/bin/beamscope --version >v && cat v &&
		grep -q "$VERSION_LINE" v &&
		if command -v man >/dev/null; then
			expect "$(man -w beamscope)" = /usr/share/man/man1/beamscope.1.gz
		fi
	'

	test_expect_success 'apt-get remove and dpkg --purge take every file away' '
		DEBIAN_FRONTEND=noninteractive apt-get remove -y -q -o DPkg::Lock::Timeout=120 \
			beamscope >apt.out 2>&1
		rc=$?
		cat apt.out
		expect "$rc" -eq 0 &&
		dpkg --purge beamscope &&
		for f in $FILES; do
			[ ! -e "/$f" ] || { echo "left /$f"; exit 1; }
		done &&
		[ ! -e /usr/share/doc/beamscope ] &&
		expect "$(installed)" = ""
	'
else
	test_skip 'apt-get install ./beamscope_*.deb installs it, and it runs' "$why"
	test_skip 'apt-get remove and dpkg --purge take every file away' "$why"
fi
test_done
