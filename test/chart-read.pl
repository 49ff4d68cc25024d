#!/usr/bin/perl
# Read a sequence chart back from the screen (tmux capture-pane on stdin)
# and print its rows: "FROM -> TO" for an arrow (the tip says which way),
# "X COL" for an exit, "+ COL" for a spawn, "@ COL" for a send to itself.
# Columns are named by their heads (the first header line); the lifelines
# are where most lines have a vertical line.
use strict;
use warnings;
binmode STDIN, ':encoding(UTF-8)';
binmode STDOUT, ':encoding(UTF-8)';
my @lines = map { chomp; [split //] } <STDIN>;
my $vline = qr/[\x{2502}|]/;
my $hline = qr/[\x{2500}\-= ~]/;
# the lifelines: columns with a vertical line on some line, and nothing
# but the chart's own characters on the lines that have lifelines
my (%count, %chart);
my @rows = grep { grep { $_ =~ $vline } @$_ } @lines;
for my $l (@rows) {
	for my $x (0 .. $#$l) {
		$count{$x}++ if $l->[$x] =~ $vline;
		$chart{$x}++ if $l->[$x] =~ /[\x{2502}\x{2500}|\-=~<>x+X\@T ]/;
	}
}
my @centers = sort { $a <=> $b } grep { $chart{$_} >= @rows } keys %count;
die "no lifelines on the screen\n" unless @centers;
# the heads: the first line of the screen
my ($first) = grep { my $l = $lines[$_]; grep { $_ =~ $vline } @$l } 0 .. $#lines;
my $head = join "", @{$lines[0]};
my @names;
for my $c (@centers) {
	my ($s, $e) = ($c, $c);
	$s-- while $s > 0 && substr($head, $s - 1, 1) ne ' ';
	$e++ while $e < length($head) - 1 && substr($head, $e + 1, 1) ne ' ';
	my $n = substr($head, $s, $e - $s + 1);
	$n =~ s/^\s+|\s+$//g;
	push @names, $n;
}
print "COLUMNS @names\n";
my %is_center = map { $centers[$_] => $_ } 0 .. $#centers;
for my $i ($first .. $#lines) {
	my $l = $lines[$i];
	# a row of the chart has a lifeline somewhere; the status and message
	# lines below it have none, and may hold an '@' (a node name) or an
	# 'X' right where a lifeline would be
	next unless grep { ($l->[$_] // ' ') =~ $vline } @centers;
	my $done = 0;
	for my $x ($centers[0] .. $centers[-1]) {
		my $ch = $l->[$x] // ' ';
		if (exists $is_center{$x} && $ch =~ /[X+\@T]/) {
			print "$ch $names[$is_center{$x}]\n";
			$done = 1;
			last;
		}
		next if exists $is_center{$x};
		next unless $ch =~ /[<>x]/;
		# a tip: next to the receiver's lifeline; the sender is the
		# first lifeline the line reaches the other way that is not
		# crossed
		my ($to, $step);
		if (exists $is_center{$x + 1} && ($ch eq '>' || $ch eq 'x') &&
		    ($l->[$x - 1] // ' ') =~ $hline) {
			($to, $step) = ($x + 1, -1);
		} elsif (exists $is_center{$x - 1}) {
			($to, $step) = ($x - 1, 1);
		} else {
			next;
		}
		my $f = $x + $step;
		$f += $step while !(exists $is_center{$f} && ($l->[$f] // ' ') =~ /[\x{2502}|+]/) &&
			$f > $centers[0] - 1 && $f < $centers[-1] + 1;
		next unless exists $is_center{$f};
		my $tag = $ch eq 'x' ? 'DEAD ' : '';
		print "$tag$names[$is_center{$f}] -> $names[$is_center{$to}]\n";
		$done = 1;
		last;
	}
}
