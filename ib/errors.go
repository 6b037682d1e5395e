package ib

import "errors"

// ErrNotSupported is the one sentinel for "the running kernel, or the
// device's driver, lacks this": nldev.ErrNotSupported and
// uverbs.ErrNotSupported are this same value, so errors.Is(err,
// nldev.ErrNotSupported) and errors.Is(err, uverbs.ErrNotSupported) both
// hold for such an error from any package. The error's text names what is
// missing (and, for kernel features, the release that brings them).
var ErrNotSupported = errors.New("not supported")
