/**
 * Perl one-liners for the tests of a step's session keyring: no `keyctl` tool needed (perl
 * is on every Debian and Ubuntu). `syscall` may write into its string arguments, so those
 * are variables.
 */

// add_key and keyctl, by architecture.
const [ADD_KEY, KEYCTL] = process.arch === 'arm64' ? [217, 219] : [248, 250];

/** Searches the session keyring for the test's key and prints its payload, or `no-key`. */
export const READER = [
  'my ($t, $d) = ("user", "epicflow-test-key");',
  `my $id = syscall(${KEYCTL}, 10, -3, $t, $d, 0);`,
  'if ($id < 0) { print "no-key\\n"; exit 0 }',
  `my $buf = "\\0" x 200; my $n = syscall(${KEYCTL}, 11, $id, $buf, 200);`,
  'print $n < 0 ? "unreadable\\n" : substr($buf, 0, $n) . "\\n";',
].join(' ');

/** Stands for epicflow's process: joins a fresh session keyring, puts `secret` in it, then runs its arguments. */
export function holder(secret: string): string {
  return [
    `syscall(${KEYCTL}, 1, 0) >= 0 or die "join: $!";`,
    `my ($t, $d, $p) = ("user", "epicflow-test-key", "${secret}");`,
    `syscall(${ADD_KEY}, $t, $d, $p, length $p, -3) >= 0 or die "add: $!";`,
    'exec { $ARGV[0] } @ARGV; die "exec: $!";',
  ].join(' ');
}
