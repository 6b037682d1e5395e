// Package cflags reads command lines the way C programs built on glibc
// read theirs, so that a Go drop-in for such a program (ibv_devinfo,
// ibv_rc_pingpong, and later the rdmacm-utils and perftest programs)
// accepts, refuses and reports exactly what the original does.
//
// Getopt is getopt_long(3): the program's optstring and long-option table
// are given as the C program declares them, and a loop over Next sees the
// options in the same order, with the same arguments and the same errors,
// worded as glibc 2.36 prints them on stderr (Error). Supported:
//
//   - short options, grouped ("-lv"), with a required argument attached
//     ("-s64") or in the next word ("-s 64"), or an optional one ("x::",
//     attached only);
//   - long options "--name=value" and "--name value" (required arguments),
//     "--name=value" only (optional ones), and any unambiguous prefix of a
//     name ("--verb"); prefixes shared by entries with the same argument
//     mode and value are aliases, not ambiguous, as in glibc;
//   - permutation: non-option words are collected, in order, and returned
//     by Args after the options, as glibc leaves them at argv[optind:];
//     "--" ends the options; "-" and "" are operands; a leading '+' in
//     optstring stops at the first operand instead (REQUIRE_ORDER), and a
//     leading ':' makes a missing argument return ':' as in C;
//   - plain getopt(3): a nil long-option table, where "--name" is the short
//     option '-' followed by more short options.
//
// Not emulated: getopt_long_only, a leading '-' in optstring
// (RETURN_IN_ORDER), "W;", the POSIXLY_CORRECT environment variable, and
// the flag pointer of struct option (give each entry its own Val instead).
//
// Strtol and Strtoul are strtol(3) and strtoul(3) on LP64 glibc: leading
// white space, a sign, base 0's "0x" and "0" prefixes, a partial parse
// that stops at the first byte that is not a digit, and saturation with
// ERANGE on overflow. Long and ULong are strtol(s, NULL, 0) and
// strtoul(s, NULL, 0), the form the C programs use for numeric options;
// convert their result as the C program's variable does (int32(Long(s))
// for an int, uint32(ULong(s)) for an unsigned int).
package cflags
