#!/usr/bin/perl
# Canonical form of a memprof report for comparison: within each run of
# consecutive entries that have the same sort key (event count, or bytes
# held in HEAP SUMMARY), the entries (with their "Overrides:" lists) are put
# in bytewise order.  The reference parser prints such ties in an order
# that depends on LuaJIT's per-process random string-hash seed, so only
# the order inside a tie is left out of the comparison; every byte of
# every entry, and the order between different keys, still counts.
use strict;
use warnings;

my @l = split /\n/, do { local $/; <STDIN> }, -1;
my (@out, @grp, $gkey);

sub flush { push @out, sort @grp; @grp = (); undef $gkey; }

for (my $i = 0; $i < @l;) {
	my $x = $l[$i];
	my $k;
	if ($x =~ /: (\d+) events\t\+\d+B\t-\d+B$/) {
		$k = "e$1";
	} elsif ($x =~ / holds (-?\d+)B: \d+ allocs, \d+ frees$/) {
		$k = "h$1";
	}
	if (!defined $k) {
		flush();
		push @out, $x;
		$i++;
		next;
	}
	my $blk = $x;
	$i++;
	if ($i < @l && $l[$i] eq "\tOverrides:") {
		while ($i < @l && $l[$i] =~ /^\t/) {
			$blk .= "\n$l[$i]";
			$i++;
		}
		if ($i < @l && $l[$i] eq '') {
			$blk .= "\n";
			$i++;
		}
	}
	flush() if defined $gkey && $gkey ne $k;
	$gkey = $k;
	push @grp, $blk;
}
flush();
print join("\n", @out);
