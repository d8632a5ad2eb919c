package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise the module's build info is used.
var version = ""

func versionString() string {
	v := version
	info, ok := debug.ReadBuildInfo()
	if v == "" && ok {
		v = info.Main.Version
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " (" + s.Value[:12] + ")"
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	goVersion := "unknown"
	if ok {
		goVersion = info.GoVersion
	}
	return fmt.Sprintf("approvalbot %s %s", v, goVersion)
}

func runVersion(ctx context.Context, e *env, args []string) int {
	if len(args) > 0 {
		fmt.Fprintln(e.stderr, "usage: approvalbot version")
		return exitUsage
	}
	fmt.Fprintln(e.stdout, versionString())
	return exitOK
}
