package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise the module's build info is used.
var version = ""

// versionString is `approvalbot VERSION COMMIT DATE [dirty] goVERSION`,
// each part once: from -ldflags, else from the build's VCS information.
func versionString() string {
	v, commit, date, dirty, goVersion := version, "unknown", "unknown", false, "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		goVersion = info.GoVersion
		if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
				if len(commit) > 12 {
					commit = commit[:12]
				}
			case "vcs.time":
				date = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "dev"
	}
	out := fmt.Sprintf("approvalbot %s %s %s", v, commit, date)
	if dirty {
		out += " dirty"
	}
	return out + " " + goVersion
}

func runVersion(ctx context.Context, e *env, args []string) int {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintln(e.stdout, "usage: approvalbot version\n\nPrints the version, commit, commit date, whether the tree was modified, and the Go version.")
		return exitOK
	}
	if len(args) > 0 {
		fmt.Fprintln(e.stderr, "usage: approvalbot version")
		return exitUsage
	}
	fmt.Fprintln(e.stdout, versionString())
	return exitOK
}
