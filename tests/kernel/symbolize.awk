# Map the host PCs of `luaunwind-ctl dump` sample lines to function names.
#   awk -v pid=PID -v bias=HEX -f symbolize.awk NM_FILE DUMP_FILE
# NM_FILE is `nm -S --defined-only BINARY` (address size type name); bias
# is the load address of the binary (its offset-0 mapping in maps).
# Prints, per sample of pid, the names innermost first, "?" outside
# every symbol of the binary.
function hex(s,    i, c, v) {
	v = 0
	s = tolower(s)
	sub(/^0x/, "", s)
	for (i = 1; i <= length(s); i++) {
		c = index("0123456789abcdef", substr(s, i, 1)) - 1
		v = v * 16 + c
	}
	return v
}
BEGIN { b = hex(bias) }
FNR == NR {
	if (NF >= 4 && ($3 == "T" || $3 == "t")) {
		n++
		lo[n] = hex($1) + b
		hi[n] = lo[n] + hex($2)
		name[n] = $4
	}
	next
}
$1 == "sample" {
	p = ""; h = ""
	for (i = 2; i <= NF; i++) {
		if ($i ~ /^pid=/) p = substr($i, 5)
		if ($i ~ /^host=/) h = substr($i, 6)
	}
	if (p != pid) next
	m = split(h, pcs, ",")
	out = ""
	for (i = 1; i <= m; i++) {
		pc = hex(pcs[i])
		# Return addresses point after the call: look up pc - 1.
		if (i > 1) pc = pc - 1
		s = "?"
		for (j = 1; j <= n; j++)
			if (pc >= lo[j] && pc < hi[j]) { s = name[j]; break }
		out = out (i > 1 ? " " : "") s
	}
	print out
}
