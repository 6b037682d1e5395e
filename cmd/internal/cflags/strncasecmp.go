package cflags

import "strings"

// HasPrefixFold is strncasecmp(word, s, strlen(word)) == 0: s starts
// with word, ignoring ASCII case (how the C programs match option
// words such as -f ipv6 against "ip").
func HasPrefixFold(s, word string) bool {
	return len(s) >= len(word) && strings.EqualFold(s[:len(word)], word)
}
