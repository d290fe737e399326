# Sourced (after lib.sh and lualib.sh) by the kernel tests that check the
# shapes of design section 6 through luaunwind-ctl record + report.
REP=$K/luaunwind-report

# rec NAME TAG SECONDS SCRIPT ARGS...: records SCRIPT on target NAME for
# SECONDS into $W/NAME-TAG.luw, reports it into $f = $W/NAME-TAG.folded.
# Every stack must be the target's own: one with an unnamed outermost
# host frame or an unresolved proto (@?0x...) comes from another
# process, left in the module's rings by an earlier record.
rec() {
	local name=$1 tag=$2 secs=$3
	shift 3
	start_lua "$name" "$@"
	$CTL record -p "$pid" -o "$W/$name-$tag.luw" --duration "$secs" \
		2>"$W/$name-$tag.err" ||
		{ cat "$W/$name-$tag.err" >&2; fail "$name $tag: record"; }
	stop_lua
	f=$W/$name-$tag.folded
	$REP "$W/$name-$tag.luw" >"$f" || fail "$name $tag: report"
	# Unnamed roots and protos: another process's samples, or (a rare
	# sample, e.g. a root 0x28) a host walk that read junk; more than 1%
	# is a bug.
	local junk
	junk=$(sum '^0x\|;@?0x')
	if [ $((100 * junk)) -gt "$(sum '')" ]; then
		grep '^0x\|;@?0x' "$f" | head -2 | cut -c1-300 >&2
		fail "$name $tag: $junk samples with unnamed roots or protos"
	fi
}

# sum [GREP ARGS...]: samples of the folded lines of $f that grep selects.
sum() {
	folded_sum "$f" "$@"
}

# most NAME TAG GOOD OF WHAT: fails unless GOOD >= 90% of OF.
most() {
	if [ $((100 * $3)) -lt $((90 * $4)) ]; then
		awk '{ print $NF, $0 }' "$f" | sort -rn | head -3 >&2
		fail "$1 $2: $3 of $4 $5"
	fi
}
