// Package bashdiff holds the differential test of the shell analyzer
// against the real GNU bash (DESIGN.md, Shell, "Understood, or ask"): every
// command line the gate allows under allow-everything rules is run by real
// bash under xtrace in a throwaway jail (user, mount, network and PID
// namespaces; read-only system, stub programs that log their argv), and
// every simple command bash executed must be one the analyzer reported.
//
// It needs Linux user namespaces and runs only with the e2e build tag:
//
//	go test -tags e2e -count=1 ./e2e/bashdiff/
//
// BASHDIFF_VIOLATIONS=FILE also writes the violating lines to FILE, one
// %q-quoted line each; BASHDIFF_ONLY=REGEXP runs only the lines it
// matches; BASHDIFF_VERBOSE=1 logs every line's evaluation and trace.
package bashdiff
