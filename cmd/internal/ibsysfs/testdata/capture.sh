#!/bin/bash
# capture.sh TOOL CASES OUTDIR records what infiniband-diags' TOOL (ibstat
# or ibstatus, from /usr/sbin) prints for each case of CASES, a line
# "name root [args...]", with the fixture tree root (a directory here,
# "empty" for an empty one, "none" for none) mounted on
# /sys/class/infiniband in a private mount namespace: OUTDIR/name.stdout,
# name.stderr (pids as [PID]) and name.exit. Run as root; the cases' tests
# in cmd/TOOL compare ours with these files.
set -eu
tool=$1 cases=$(realpath "$2") out=$(realpath "$3")
here=$(dirname "$(realpath "$0")")
empty=$(mktemp -d)
trap 'rmdir "$empty"' EXIT
grep -v '^#' "$cases" | while read -r name root args; do
	case $root in
	empty) dir=$empty ;;
	none) dir= ;;
	*) dir=$here/$root ;;
	esac
	set +e
	# shellcheck disable=SC2086 # args are words
	unshare -m bash -c '
		mount -t tmpfs none /sys/class || exit 99
		if [ -n "$1" ]; then mkdir /sys/class/infiniband && mount --bind "$1" /sys/class/infiniband || exit 99; fi
		shift; cd / && exec -a "$1" "/usr/sbin/$@"' x "$dir" "$tool" $args \
		>"$out/$name.stdout" 2>"$out/$name.stderr.raw"
	echo $? >"$out/$name.exit"
	set -e
	sed 's/\[[0-9]*\]/[PID]/' "$out/$name.stderr.raw" >"$out/$name.stderr"
	rm "$out/$name.stderr.raw"
done
