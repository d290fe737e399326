#!/usr/bin/env bash
# Check the relative links of README.md and userspace/doc/*.md: every
# [text](path) and [text](path#anchor) outside code must name an existing
# file, and an anchor a heading of the target markdown file (GitHub's ids:
# lower case, punctuation dropped, spaces to '-', -1, -2 ... on repeats).
# Absolute URLs are not fetched.  Prints each broken link; exits 1 if any.
#
# usage: scripts/doc-links.sh [FILE.md...]   (default: README.md userspace/doc/*.md)
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- README.md userspace/doc/*.md
exec perl -CSD -Mutf8 -e '
use strict;
use warnings;
use File::Basename qw(dirname);

my %ids;	# file -> { id => 1 }
sub ids {
	my ($f) = @_;
	return $ids{$f} if $ids{$f};
	my (%id, %seen, $code);
	open(my $h, "<", $f) or die "$f: $!\n";
	while (<$h>) {
		if (/^\s*(```|~~~)/) { $code = !$code; next; }
		next if $code || !/^#{1,6}\s+(.*?)\s*#*\s*$/;
		my $s = lc $1;
		$s =~ s/\[([^\]]*)\]\([^)]*\)/$1/g;	# a link: its text
		$s =~ s/[^\p{L}\p{N}_ -]//g;
		$s =~ s/ /-/g;
		my $n = $seen{$s}++;
		$id{$n ? "$s-$n" : $s} = 1;
	}
	return $ids{$f} = \%id;
}

my ($bad, $n) = (0, 0);
for my $f (@ARGV) {
	open(my $h, "<", $f) or die "$f: $!\n";
	my $code;
	while (my $l = <$h>) {
		my $ln = $.;
		if ($l =~ /^\s*(```|~~~)/) { $code = !$code; next; }
		next if $code;
		$l =~ s/`[^`]*`//g;	# inline code
		while ($l =~ /\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g) {
			my $t = $1;
			next if $t =~ m{^[a-z][a-z0-9+.-]*:}i;	# http:, mailto:
			$n++;
			my ($p, $a) = $t =~ /^([^#]*)(?:#(.*))?$/;
			my $dst = $p eq "" ? $f : dirname($f) . "/$p";
			if (!-e $dst) {
				print "$f:$ln: $t: no such file\n";
				$bad++;
			} elsif (defined $a && $dst =~ /\.md$/ && !ids($dst)->{$a}) {
				print "$f:$ln: $t: no heading #$a in $dst\n";
				$bad++;
			}
		}
	}
}
print "doc-links: $n relative links, ", ($bad ? "$bad broken" : "all resolve"), "\n";
exit($bad ? 1 : 0);
' "$@"
