#!/bin/sh
# make install and make uninstall, under DESTDIR and PREFIX: the binary, the
# man page and the completions where Debian's shells look for them.
. "$(dirname "$0")/lib.sh"

DEST=$TRASH/dest
FILES="usr/bin/beamscope
usr/share/man/man1/beamscope.1
usr/share/bash-completion/completions/beamscope
usr/share/zsh/vendor-completions/_beamscope
usr/share/fish/vendor_completions.d/beamscope.fish"

# the build is done: a make of our own, not a part of the caller's
mk() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$TOP" BUILD="$BUILD" "$@"
}

test_expect_success 'make install DESTDIR PREFIX=/usr puts every file in place' '
	mk install DESTDIR="$DEST" PREFIX=/usr &&
	for f in $FILES; do
		[ -f "$DEST/$f" ] || { echo "missing $f"; exit 1; }
	done &&
	[ -x "$DEST/usr/bin/beamscope" ] &&
	cmp "$TOP/completions/beamscope.bash" "$DEST/usr/share/bash-completion/completions/beamscope" &&
	cmp "$TOP/man/beamscope.1" "$DEST/usr/share/man/man1/beamscope.1" &&
	(cd "$DEST" && find . -type f | sed "s|^./||" | sort) >installed &&
	printf "%s\n" $FILES | sort | diff - installed
'

test_expect_success 'the installed binary runs' '
	"$DEST/usr/bin/beamscope" --version >v && cat v &&
	grep -q "^beamscope [0-9.]* (built against OTP $OTP_RELEASE; targets need OTP [0-9]* or newer)\$" v
'

test_expect_success 'the installed bash completion completes the installed binary' '
	bash -c ". \"$DEST/usr/share/bash-completion/completions/beamscope\" &&
		COMP_WORDS=(beamscope --on-limit s) COMP_CWORD=2 &&
		_beamscope beamscope s --on-limit && echo \"\${COMPREPLY[*]}\"" >got &&
	grep -qx "stop shed" got
'

test_expect_success 'make uninstall removes every file' '
	mk uninstall DESTDIR="$DEST" PREFIX=/usr &&
	for f in $FILES; do
		[ ! -e "$DEST/$f" ] || { echo "left $f"; exit 1; }
	done &&
	[ -z "$(find "$DEST" -type f)" ]
'

test_expect_success 'PREFIX is honoured' '
	mk install DESTDIR="$DEST" PREFIX=/opt/bs &&
	[ -x "$DEST/opt/bs/bin/beamscope" ] &&
	[ -f "$DEST/opt/bs/share/zsh/vendor-completions/_beamscope" ] &&
	mk uninstall DESTDIR="$DEST" PREFIX=/opt/bs &&
	[ -z "$(find "$DEST" -type f)" ]
'
test_done
