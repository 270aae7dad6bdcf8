"""The session supervisor in Perl: `supervisor.py`'s protocol, started in ~2 ms of CPU.

A bwrap session pays its supervisor's start once per agent sample, and in a burst (16 samples
reach their first command together) that start is CPU the whole run waits for: Python's takes
~9.5 ms (measured with `perf stat`), Perl's ~2.4 ms, so the bench's wall time over its ideal
drops by about a tenth. `perl` comes from Debian's `perl-base`, which is essential (always
installed); `BwrapSandbox.session` uses this one when the sandbox sees `/usr/bin/perl` and the
Python supervisor otherwise. Only Perl's core is used (no module: each costs start time); the
tests run every session test with both.

Differences from `supervisor.py` that do not show in answers: the command gets its own process
group (`setpgrp`) rather than its own session, and its exit is awaited on a pidfd (`syscall`
434, `pidfd_open`) with `select`, falling back to polling where the kernel has none.
"""

SOURCE = r"""
$| = 1;
binmode STDIN;
binmode STDOUT;
while (defined(my $header = <STDIN>)) {
    my ($id, $timeout, $cap, $size) = split ' ', $header;
    my $payload = '';
    last if $size && read(STDIN, $payload, $size) != $size;
    my ($code, $timed_out, $out, $err) = run([split /\0/, $payload, -1], $timeout, $cap);
    print "$id $code $timed_out " . length($out) . ' ' . length($err) . "\n" . $out . $err;
}

sub run {
    my ($argv, $timeout, $cap) = @_;
    open(my $out, '+>', undef) or return (126, 0, '', "supervisor: $!\n");
    open(my $err, '+>', undef) or return (126, 0, '', "supervisor: $!\n");
    my $pid = fork();
    return (126, 0, '', "supervisor: fork: $!\n") unless defined $pid;
    if ($pid == 0) {
        setpgrp(0, 0);
        open(STDIN, '<', '/dev/null');
        open(STDOUT, '>&', $out);
        open(STDERR, '>&', $err);
        { exec { $argv->[0] } @$argv; }
        my $missing = $! + 0 == 2;  # ENOENT
        syswrite(STDERR, "$argv->[0]: $!\n");
        exit($missing ? 127 : 126);
    }
    my $status = finished($pid, $timeout);
    if (!defined $status) {
        kill(9, -$pid);  # the whole process group
        waitpid($pid, 0);
        gone($pid);
    }
    my $code = !defined $status ? '-' : ($status & 127) ? -($status & 127) : $status >> 8;
    return ($code, defined $status ? 0 : 1, tail($out, $cap), tail($err, $cap));
}

sub finished {  # the wait status of $pid, or undef if it still runs after $left seconds
    my ($pid, $left) = @_;
    my $fd = syscall(434, $pid, 0);  # pidfd_open: readable once the process has exited
    if ($fd < 0) {
        for (my $step = 0.001; $left > 0; $left -= $step) {
            return $? if waitpid($pid, 1) == $pid;  # 1: WNOHANG
            select(undef, undef, undef, $step);
            $step *= 2 if $step < 0.05;
        }
        return waitpid($pid, 1) == $pid ? $? : undef;
    }
    open(my $handle, '<&=', $fd);
    my ($bits, $found) = ('', -1);
    vec($bits, $fd, 1) = 1;
    ($found, $left) = select(my $ready = $bits, undef, undef, $left) while $found < 0;
    close($handle);
    return undef unless $found > 0;
    waitpid($pid, 0);
    return $?;
}

sub gone {  # supervisor.py's `gone`: killed until none of the group is left, 5 s at most
    my ($group) = @_;
    for (my $left = 5000; $left > 0 && kill(9, -$group); $left--) {
        select(undef, undef, undef, 0.001);
    }
}

sub tail {
    my ($handle, $cap) = @_;
    seek($handle, 0, 2);
    my $size = tell($handle);
    seek($handle, $size > $cap ? $size - $cap : 0, 0);
    my $data = '';
    read($handle, $data, $cap);
    return $data;
}
"""
