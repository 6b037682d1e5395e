package testenv

// Repeats is how many cycles a test that repeats one to show a leak runs:
// n, or a tenth of n (at least 1) in a binary built with the race
// detector. Its run looks for data races, which a hundred cycles of the
// same connection show as well as a thousand, each several times slower;
// the leak itself is counted by the runs without it.
func Repeats(n int) int {
	if Race {
		return max(1, n/10)
	}
	return n
}
