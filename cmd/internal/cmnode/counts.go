package cmnode

// Counts are the examples' -c, -C and -S (connections, message_count,
// message_size), which udaddy.c, mckey.c and cmatose.c read alike.
type Counts struct {
	Connections int // -c
	Count       int // -C
	Size        int // -S
}

// DefaultCounts are those programs' defaults: 1 connection, 10
// messages of 100 bytes.
func DefaultCounts() Counts { return Counts{Connections: 1, Count: 10, Size: 100} }

// Option takes arg (atoi'd) if opt is -c, -C or -S, and reports whether
// it was one of them.
func (c *Counts) Option(opt rune, arg string) bool {
	switch opt {
	case 'c':
		c.Connections = Atoi(arg)
	case 'C':
		c.Count = Atoi(arg)
	case 'S':
		c.Size = Atoi(arg)
	default:
		return false
	}
	return true
}
